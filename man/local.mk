# man rules
