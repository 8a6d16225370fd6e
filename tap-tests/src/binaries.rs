//! Where the server binaries come from.
//!
//! Integration tests run from `<target>/<profile>/deps/<test>-<hash>`; the
//! workspace's binaries are in `<target>/<profile>/`. `cargo test` builds the
//! tap-tests package but not the `primary` / `standby` binaries (other
//! packages), so a stale or missing binary is likely. The harness therefore
//! runs, once per test process, before the first node starts:
//!
//! ```text
//! cargo build -p primary -p standby [--release | --profile P]   (CARGO_TARGET_DIR=<target>)
//! ```
//!
//! from the workspace root — a no-op when they are up to date. Plain
//! `cargo test --workspace` from a clean checkout thus works. Setting
//! `HOTPAIR_BIN_DIR=dir` uses the binaries in `dir` as they are, without
//! building (handy when running a test executable by hand).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The directory holding `primary` and `standby`, built if needed.
pub fn bin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = std::env::var_os("HOTPAIR_BIN_DIR") {
            return PathBuf::from(dir);
        }
        let profile_dir = profile_dir();
        build_binaries(&profile_dir);
        profile_dir
    })
}

/// Full path of the binary `name` (`primary`, `standby`).
pub fn bin_path(name: &str) -> PathBuf {
    let path = bin_dir().join(name);
    assert!(
        path.is_file(),
        "binary {} not found (built into {})",
        name,
        bin_dir().display()
    );
    path
}

/// The fault-injection library `libfaultfs.so` (crate `common/faultfs`,
/// loaded into a node with `LD_PRELOAD`): beside the binaries, built with
/// `cargo build -p faultfs` once per test process unless `HOTPAIR_BIN_DIR`
/// is set (then it must be there).
pub fn faultfs_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = bin_dir().to_path_buf();
        if std::env::var_os("HOTPAIR_BIN_DIR").is_none() {
            cargo_build(&dir, &["-p", "faultfs"]);
        }
        let path = dir.join("libfaultfs.so");
        assert!(path.is_file(), "{} not found", path.display());
        path
    })
    .clone()
}

/// `<target>/<profile>`: the test executable's directory, minus `deps`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe of the test binary");
    let mut dir = exe
        .parent()
        .expect("test binary has a directory")
        .to_path_buf();
    if dir.file_name().is_some_and(|n| n == "deps") {
        dir.pop();
    }
    dir
}

/// The cargo target directory (`<target>`), used for per-test directories.
pub fn target_dir() -> PathBuf {
    let profile = profile_dir();
    profile.parent().map(Path::to_path_buf).unwrap_or(profile)
}

/// The workspace root (the parent of this crate's manifest directory).
pub fn workspace_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn build_binaries(profile_dir: &Path) {
    cargo_build(profile_dir, &["-p", "primary", "-p", "standby", "--bins"]);
}

/// `cargo build --quiet ARGS` into `profile_dir`'s target and profile.
fn cargo_build(profile_dir: &Path, args: &[&str]) {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace_dir())
        .args(["build", "--quiet"])
        .args(args);
    match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => {}
        Some("release") => {
            cmd.arg("--release");
        }
        Some(other) => {
            cmd.args(["--profile", other]);
        }
    }
    if let Some(target) = profile_dir.parent() {
        cmd.env("CARGO_TARGET_DIR", target);
    }
    eprintln!("# building: {cmd:?}");
    let out = cmd.output().expect("could not run cargo build");
    assert!(
        out.status.success(),
        "cargo build failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
