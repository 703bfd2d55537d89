"""What the numbers mean: the bottleneck account, the ceilings, the ladders, the predictions of each step."""
