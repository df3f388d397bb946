"""Reference implementations of the benchmarks' own scoring scripts, written in the tests from reading them."""
