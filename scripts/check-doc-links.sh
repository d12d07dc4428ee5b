#!/usr/bin/env bash
# Checks that every relative link in README.md and docs/*.md points to a
# file that exists and, when it names an #anchor, to a heading of that file
# (GitHub's slug: lower case, punctuation dropped, spaces to hyphens).
# Prints each broken link and exits 1 when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."

slugs() { # the anchors of the headings of file $1
	grep -E '^#+ ' "$1" | sed -E 's/^#+ //' | tr 'A-Z' 'a-z' |
		sed -E 's/[^a-z0-9 _-]//g; s/ /-/g'
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for doc in README.md docs/*.md; do
	dir=$(dirname "$doc")
	# ](target) links; the target ends at ) or a space.
	{ grep -oE '\]\([^) ]+\)' "$doc" || true; } | sed -E 's/^\]\(//; s/\)$//' | while read -r target; do
		case "$target" in http://* | https://* | mailto:*) continue ;; esac
		path=${target%%#*}
		anchor=""
		[[ "$target" == *"#"* ]] && anchor=${target#*#}
		file="$doc"
		[ -n "$path" ] && file="$dir/$path"
		if [ ! -e "$file" ]; then
			echo "$doc: $target: no file $file"
			echo x >>"$tmp"
			continue
		fi
		if [ -n "$anchor" ] && ! slugs "$file" | grep -qxF "$anchor"; then
			echo "$doc: $target: no heading #$anchor in $file"
			echo x >>"$tmp"
		fi
	done
done
if [ -s "$tmp" ]; then
	exit 1
fi
echo "doc links: all resolve"
