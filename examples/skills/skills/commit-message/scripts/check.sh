#!/bin/sh
# check.sh FILE: refuses a commit message whose summary line is too long.
head -n 1 "$1" | awk 'length > 72 { print "summary line over 72 characters"; exit 1 }'
