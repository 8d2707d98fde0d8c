# packaging rules
