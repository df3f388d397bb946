"""Reference implementations of the benchmarks' own scoring scripts, written in tests from reading them."""
