# Where this worktree's git dir ($gd), the common git dir ($cd) and the new HEAD ($sha) are,
# without starting a process in the common case (git runs hooks at the worktree's top level).
gd=${GIT_DIR:-.git}
case $gd in /*) ;; *) gd=$PWD/$gd ;; esac
if [ ! -f "$gd/HEAD" ]; then
  gd=$(git rev-parse --absolute-git-dir 2>/dev/null) || exit 0
fi
cd=$gd; if [ -f "$gd/commondir" ]; then
  read -r cd < "$gd/commondir"; case $cd in /*) ;; *) cd=$gd/$cd ;; esac
fi
state="$cd/@STATE_DIR@"; [ -d "$state" ] || exit 0
head=; read -r head < "$gd/HEAD"
sha=; case $head in
  "ref: "*) [ -f "$cd/${head#ref: }" ] && read -r sha < "$cd/${head#ref: }" ;;
  *) sha=$head ;;
esac
[ ${#sha} -ge 40 ] || sha=$(git rev-parse -q --verify HEAD 2>/dev/null)
wt=main; [ "$gd" -ef "$cd" ] || wt=${gd##*/}
# A path no spool field can hold (a tab or a newline in it): the drainer derives it from $wt.
field=$gd; case $gd in *'	'*|*'
'*) field= ;; esac
