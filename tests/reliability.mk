# tests: reliability
