"""Benchmark engine: payloads, a timed client, warmup until stable, measurement with floors."""
