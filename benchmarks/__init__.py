"""Benchmarks: ratios against a raw baseline measured in the same process."""
