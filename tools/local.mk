# tools rules
