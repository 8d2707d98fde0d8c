# tests: api
