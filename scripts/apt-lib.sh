# Sourced by the setup scripts: installs Debian packages with apt-get, as
# root or through password-less sudo, quietly; exits with a message naming
# the caller and the packages when it cannot.
#
#   apt_install NAME PACKAGE...    # NAME prefixes the messages (setup-redis)

apt_install() {
    local name=$1
    shift
    local as_root
    if [ "$(id -u)" = 0 ]; then
        as_root=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        as_root=(sudo -n)
    else
        echo "$name: $* missing and this user can't install them (not root, no password-less sudo): apt-get install $*" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get update -qq || { echo "$name: apt-get update failed" >&2; exit 1; }
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
        { echo "$name: apt-get install $* failed" >&2; exit 1; }
}
