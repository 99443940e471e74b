#!/bin/sh
# python_install_test.sh BUILD_DIR PYTHON: the Python package ett installed by `cmake --install` (component
# python) into a scratch prefix, where Debian's python3 finds it (lib/python3.X/dist-packages, and under /usr
# lib/python3/dist-packages), then imported from there to read a synthetic trace image into numpy.
set -eu
build=$(cd "$1" && pwd)
python=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
"$build/bin/ett" synth trace.img --events 5000 -q

cmake --install "$build" --prefix "$scratch/prefix" --component python >/dev/null
site="$scratch/prefix/$("$python" -c 'import sys; print("lib/python%d.%d/dist-packages" % sys.version_info[:2])')"
[ -f "$site/ett/__init__.py" ]
shape=$(PYTHONPATH="$site" "$python" -c "import ett; c = ett.open('trace.img'); print(c.events().shape)")
[ "$shape" = "(5000,)" ]
PYTHONPATH="$site" "$python" -c "import ett, sys; sys.exit(0 if ett.__file__.startswith('$site') else 1)"

# The Debian package's layout: prefix /usr, the version-independent dist-packages.
DESTDIR="$scratch/root" cmake --install "$build" --prefix /usr --component python >/dev/null
# Where the interpreter itself looks for Debian's packages (its version-independent dist-packages on sys.path):
# the install must land there.
debian_site=$("$python" -c "import sys; print(next(p for p in sys.path if p.endswith('/python3/dist-packages')))")
site="$scratch/root$debian_site"
[ -f "$site/ett/__init__.py" ]
shape=$(PYTHONPATH="$site" "$python" -c "import ett; c = ett.open('trace.img'); print(c.events().shape)")
[ "$shape" = "(5000,)" ]
echo "python install test: ok"
