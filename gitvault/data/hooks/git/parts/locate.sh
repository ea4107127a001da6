# Where this worktree's git dir ($gd), the common git dir ($cd) and the new HEAD ($sha) are,
# without a process in the common case: hooks run at the worktree's top level, whose `.git` is
# a folder or a file naming the git dir (linked worktree, submodule, --separate-git-dir).
gd=${GIT_DIR:-}
if [ -z "$gd" ]; then
  gd=.git
  if [ -f .git ] && [ ! -L .git ]; then
    gd=; read -r gd < .git; gd=${gd#gitdir: }
    case $gd in /*) ;; ?*) gd=$PWD/$gd ;; esac
  fi
fi
case $gd in /*) ;; *) gd=$PWD/$gd ;; esac
if [ ! -f "$gd/HEAD" ]; then
  gd=$(git rev-parse --absolute-git-dir 2>/dev/null) || exit 0
fi
cd=$gd; if [ -f "$gd/commondir" ]; then
  read -r cd < "$gd/commondir"; case $cd in /*) ;; *) cd=$gd/$cd ;; esac
fi
# gitvault's folder: a real folder, never a link to somewhere else.
state="$cd/@STATE_DIR@"; { [ -d "$state" ] && [ ! -L "$state" ]; } || exit 0
head=; read -r head < "$gd/HEAD"
sha=; case $head in
  "ref: "*) [ -f "$cd/${head#ref: }" ] && read -r sha < "$cd/${head#ref: }" ;;
  *) sha=$head ;;
esac
[ ${#sha} -ge 40 ] || sha=$(git rev-parse -q --verify HEAD 2>/dev/null)
wt=main; [ "$gd" -ef "$cd" ] || wt=${gd##*/}
T='	'; N='
'
# A name no spool field can hold (a tab or newline in it) is left out (the drainer copes).
field=$gd; case $gd in *"$T"*|*"$N"*) field= ;; esac
case $wt in *"$T"*|*"$N"*) wt= ;; esac
