#!/bin/sh
# stacks-agent.sh — one command for the other VM of scripts/rxe/stacks.sh:
# busybox nc runs this per connection (nc -ll -e); it reads one line, runs it
# and answers its output, then "AGENT_RC=<status>".
read -r line
sh -c "$line" 2>&1
echo "AGENT_RC=$?"
