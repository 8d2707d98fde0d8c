# fuzz rules
