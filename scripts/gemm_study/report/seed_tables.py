"""The headline tables of the lab write-ups in ../shared/seeds, as published there (their GPUs,
their numbers), so the report can set this GPU's measurements next to them."""

# Seed 000 (SYSU lab 10, GPU not named): milliseconds, square N, block T x T.
# (mapping) -> {N: {T: (naive, shared, register)}}
SEED000 = {
    "row": {
        512: {8: (2.651, 1.023, 1.023), 16: (1.861, 0.906, 0.907), 32: (2.399, 0.829, 0.834)},
        1024: {8: (22.234, 8.029, 8.034), 16: (14.932, 7.078, 7.077), 32: (18.035, 6.528, 6.522)},
        2048: {8: (174.459, 63.933, 64.019), 16: (118.749, 56.225, 56.229), 32: (142.870, 51.608, 51.611)},
    },
    "col": {
        512: {8: (4.474, 1.762, 1.029), 16: (7.951, 2.772, 0.934), 32: (14.877, 4.955, 0.984)},
        1024: {8: (38.277, 13.993, 8.099), 16: (62.307, 22.091, 7.151), 32: (117.006, 39.046, 7.093)},
        2048: {8: (283.027, 110.628, 64.542), 16: (497.853, 174.939, 56.397), 32: (926.561, 310.436, 56.440)},
    },
    "block": {
        512: {8: (2.658, 1.018, 1.020), 16: (1.852, 0.908, 0.900), 32: (2.393, 0.831, 0.832)},
        1024: {8: (22.203, 8.035, 8.031), 16: (14.902, 7.078, 7.076), 32: (18.100, 6.518, 6.527)},
        2048: {8: (174.622, 64.015, 64.026), 16: (118.777, 56.229, 56.234), 32: (142.842, 51.734, 51.741)},
    },
}
# Our variants for each mapping's (naive, shared, register) columns; {t} is the tile edge.
SEED000_VARIANTS = {
    "row": ("naive_row/block:{t}x{t}", "shared/tile:{t}", "shared_register/tile:{t}"),
    "col": ("naive_col/block:{t}x{t}", "shared_col/tile:{t}", "shared_register_col/tile:{t}"),
    "block": ("naive_tile/tile:{t}x{t}", "shared/tile:{t}", "shared_register/tile:{t}"),
}

# Seed 002 (Tesla T4, FP32): N -> {TILE: (naive_ms, shared_ms)}; TILE 64 skipped (4096 threads).
SEED002 = {
    1024: {8: (5.351, 4.120), 16: (3.903, 3.065), 32: (3.176, 3.285)},
    2048: {8: (64.543, 48.388), 16: (39.200, 32.632), 32: (27.944, 26.431)},
    4096: {8: (535.433, 391.150), 16: (319.544, 261.740), 32: (232.351, 205.859)},
}

# Seed 001 (Hygon DCU, FP64 peak 10.1 TFLOP/s): 2-D shared-memory kernel (32 x 32 tiles),
# kernel-only GFLOP/s by square size.
SEED001_FP64_SHARED_GFLOPS = {
    128: 35.28,
    256: 204.04,
    384: 392.98,
    512: 508.81,
    640: 635.60,
    768: 761.24,
    896: 791.57,
    1024: 825.46,
    2048: 981.83,
    3072: 1023.19,
    4096: 1043.98,
    5120: 1058.14,
    6144: 1068.03,
    7168: 1083.50,
    8192: 1056.59,
    9216: 1090.76,
}

# Seed 003 (NVIDIA L20, FP32, N = 1024, BLOCK_SIZE 32): naive vs shared, milliseconds.
SEED003 = {"naive": 0.640416, "shared": 0.502784}
