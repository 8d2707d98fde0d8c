# tests: bench
