# tests: man
