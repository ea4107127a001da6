IFS='
'; set -- $(git rev-parse --path-format=absolute --git-dir --git-common-dir HEAD 2>/dev/null); unset IFS
[ -n "$2" ] || exit 0
state="$2/gitvault"; [ -d "$state" ] || exit 0
head=; read -r head < "$1/HEAD"; wt=main; [ "$1" = "$2" ] || wt=${1##*/}
