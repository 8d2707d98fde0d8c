#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Print the C program in the EXAMPLE section of the man page $1: the lines
# between .EX and .EE, with the roff escapes the pages use turned back
# into C (\e backslash, \- minus, \(aq quote, \(dq double quote, \& nothing).
# Prints nothing when the page has no EXAMPLE code (e.g. a .so link).
exec awk '
	/^\.SH[ \t]/ { in_ex = ($0 ~ /^\.SH[ \t]+"?EXAMPLES?"?[ \t]*$/); next }
	in_ex && /^\.EX/ { code = 1; next }
	in_ex && /^\.EE/ { code = 0; next }
	code {
		line = $0
		out = ""
		while ((i = index(line, "\\")) > 0) {
			out = out substr(line, 1, i - 1)
			c = substr(line, i + 1, 1)
			if (c == "e") { out = out "\\"; line = substr(line, i + 2) }
			else if (c == "-") { out = out "-"; line = substr(line, i + 2) }
			else if (c == "&") { line = substr(line, i + 2) }
			else if (substr(line, i + 1, 3) == "(aq") { out = out "\047"; line = substr(line, i + 4) }
			else if (substr(line, i + 1, 3) == "(dq") { out = out "\""; line = substr(line, i + 4) }
			else { printf "unknown escape in example: %s\n", $0 > "/dev/stderr"; exit 2 }
		}
		print out line
	}
' "$1"
