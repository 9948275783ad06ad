# Sourced by the other scripts: a project virtualenv with the project installed (editable).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
VENV="${KA_VENV:-$ROOT/.venv}"
EXTRAS="${1:-}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
stamp="$VENV/.ka-installed$EXTRAS"
if [ ! -f "$stamp" ] || [ "$ROOT/pyproject.toml" -nt "$stamp" ]; then
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  # setuptools warns on every editable install of a flat layout that a folder named like the
  # package may shadow it: here that folder is the package itself.
  PYTHONWARNINGS="ignore:Editable installation" "$VENV/bin/python" -m pip install --quiet -e "$ROOT$EXTRAS"
  touch "$stamp"
fi
export PATH="$VENV/bin:$PATH"
cd "$ROOT"
