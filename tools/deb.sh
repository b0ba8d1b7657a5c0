#!/bin/sh
# Builds hiops' Debian package with cargo-deb (cargo install cargo-deb):
# the release binary, then the man page and shell completions that binary
# writes (the assets [package.metadata.deb] in crates/cli/Cargo.toml names),
# then the package in target/debian/. Arguments go to cargo deb, e.g.
#   tools/deb.sh --maintainer "NAME <MAIL>"
set -eu
cd "$(dirname "$0")/.."
cargo build --release --locked -p hiops
target=$(cargo metadata --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
hiops="$target/release/hiops"
assets="$target/release/assets"
mkdir -p "$assets"
"$hiops" man | gzip -9n > "$assets/hiops.1.gz"
"$hiops" completions bash > "$assets/hiops.bash"
"$hiops" completions zsh > "$assets/_hiops"
"$hiops" completions fish > "$assets/hiops.fish"
cargo deb -p hiops --no-build "$@"
