# tests rules
