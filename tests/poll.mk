# tests: poll
