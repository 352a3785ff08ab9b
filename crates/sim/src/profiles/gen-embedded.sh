#!/bin/sh
# Regenerates embedded.rs from the files under profiles/ (run from the workspace root).
set -eu
out=crates/sim/src/profiles/embedded.rs
{
echo '//! The shipped profiles, embedded in the binary so `storlab` works from any directory.'
echo '//!'
echo '//! Keep in step with `profiles/`: the test `embedded_table_matches_profiles_dir` fails when a'
echo '//! file is added there but not here (regenerate with `crates/sim/src/profiles/gen-embedded.sh`).'
echo
echo '/// (category, name, TOML text) of every shipped profile.'
echo 'pub const EMBEDDED_PROFILES: &[(&str, &str, &str)] = &['
# Subfolders of a category group related parts: stacks/lucidport/x.toml is the stack lucidport/x.
for f in $(cd profiles && find . -mindepth 2 -name '*.toml' | sed 's|^\./||' | LC_ALL=C sort); do
  c=${f%%/*}; n=${f#*/}; n=${n%.toml}
  echo "    (\"$c\", \"$n\", include_str!(\"../../../../profiles/$f\")),"
done
echo '];'
} > "$out"
