"""Whole-process benchmarks of gate's hooks and commands against a stdlib floor and against peer tools."""
