//! `agent.shell_interception: mount`: the shims stand at `/bin/sh` and
//! `/bin/bash` themselves, for the agent only. Several agents spawn their
//! shell by absolute path (pi `/bin/bash`, mini-swe-agent's
//! `subprocess.run(shell=True)` and Node's `exec` `/bin/sh`), which a folder
//! first on `PATH` never reaches. So the agent runs under bubblewrap
//! (`bwrap`) in a mount namespace of its own: the whole file system as it
//! is, with reloop's binary bound over the files `/bin/sh` and `/bin/bash`
//! resolve to, and the real shells bound into the run's scratch folder,
//! where the plan names them for the shim's fallbacks (a script, a
//! passthrough command, `replay-or-live`). bwrap works as root and,
//! where unprivileged user namespaces are allowed, as any user; when it is
//! not installed the run fails, naming it, rather than letting the
//! agent's commands run for real.

use std::path::{Path, PathBuf};

use super::SHELLS;
use crate::black_box::process::on_path;

/// The program that makes the mount namespace.
const BWRAP: &str = "bwrap";

/// The paths an agent may start a shell by; each is bound over where it
/// resolves to (`/bin/sh` is often a link to `dash`, `/bin` to `/usr/bin`).
const SHELL_PATHS: [(&str, &str); 4] = [("sh", "/bin/sh"), ("bash", "/bin/bash"), ("sh", "/usr/bin/sh"), ("bash", "/usr/bin/bash")];

/// One shell file covered by the shim: what it answers as, where it is,
/// and where its real program is reachable inside the namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Covered {
    /// `sh` or `bash`: the shell the shim answers as.
    pub shell: &'static str,
    /// The file the shim is bound over (the target of the shell's path).
    pub file: PathBuf,
    /// The real program, bound inside the scratch folder.
    pub real: PathBuf,
}

/// The files the shim covers, each with its real program's place under
/// `real_dir`; a shell path missing on this machine is left out.
pub fn covered(real_dir: &Path) -> Vec<Covered> {
    let mut found: Vec<Covered> = Vec::new();
    for (shell, path) in SHELL_PATHS {
        let Ok(file) = std::fs::canonicalize(path) else { continue };
        if found.iter().any(|seen| seen.file == file) {
            continue;
        }
        let name = file.file_name().map_or_else(|| shell.into(), |name| name.to_string_lossy().into_owned());
        found.push(Covered { shell, real: real_dir.join(name), file });
    }
    found
}

/// The names a covered file may be started as besides `sh` and `bash`
/// (`dash`, the file `/bin/sh` resolves to), each with the shell it is.
pub fn aliases(covered: &[Covered]) -> Vec<(String, String)> {
    let name = |file: &Path| file.file_name().map(|name| name.to_string_lossy().into_owned());
    covered.iter().filter_map(|c| name(&c.file).filter(|n| !SHELLS.contains(&n.as_str())).map(|n| (n, c.shell.to_owned()))).collect()
}

/// The argv that runs `argv` in the namespace: bwrap, found on reloop's
/// own `PATH`, binding `shim` (reloop's binary) over each covered file.
/// The real programs' mount points are made here first, as empty files.
///
/// # Errors
///
/// bwrap is not installed, or a mount point cannot be made.
pub fn wrap(argv: &[String], shim: &Path, covered: &[Covered]) -> Result<Vec<String>, String> {
    let bwrap = on_path(BWRAP, &[]).ok_or_else(|| {
        "agent.shell_interception: mount needs bubblewrap (`bwrap`), which is not on PATH: it puts the shell shims at /bin/sh and /bin/bash \
         for the agent only (Debian, Ubuntu: `apt-get install bubblewrap`); without it the agent's shell would run its commands for real"
            .to_owned()
    })?;
    let mut wrapped = vec![bwrap.display().to_string(), "--dev-bind".into(), "/".into(), "/".into(), "--die-with-parent".into()];
    for shell in covered {
        if let Some(dir) = shell.real.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the real shells' folder {}: {e}", dir.display()))?;
        }
        std::fs::write(&shell.real, b"").map_err(|e| format!("cannot make the mount point {}: {e}", shell.real.display()))?;
        // bwrap reads every source in the old root, so the real shell is
        // still the original after the shim covers it.
        wrapped.extend(["--ro-bind".into(), shell.file.display().to_string(), shell.real.display().to_string()]);
    }
    for shell in covered {
        wrapped.extend(["--ro-bind".into(), shim.display().to_string(), shell.file.display().to_string()]);
    }
    wrapped.push("--".into());
    wrapped.extend(argv.iter().cloned());
    Ok(wrapped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_shell_file_is_covered_once_with_its_real_program_in_the_scratch_folder() {
        let real = Path::new("/scratch/real-shells");
        let covered = covered(real);
        let files: Vec<&PathBuf> = covered.iter().map(|c| &c.file).collect();
        let mut unique = files.clone();
        unique.dedup();
        assert_eq!(files, unique, "a file covered twice: {covered:?}");
        for c in &covered {
            assert!(c.file.is_absolute() && c.real.starts_with(real), "{c:?}");
            assert_eq!(c.real.file_name(), c.file.file_name(), "{c:?}");
        }
        if Path::new("/bin/sh").exists() {
            let sh = std::fs::canonicalize("/bin/sh").unwrap();
            assert!(covered.iter().any(|c| c.file == sh && c.shell == "sh"), "{covered:?}");
        }
    }

    #[test]
    fn a_file_named_otherwise_is_an_alias_of_its_shell() {
        let covered = [
            Covered { shell: "sh", file: "/usr/bin/dash".into(), real: "/s/dash".into() },
            Covered { shell: "bash", file: "/usr/bin/bash".into(), real: "/s/bash".into() },
        ];
        assert_eq!(aliases(&covered), [("dash".to_owned(), "sh".to_owned())]);
    }

    #[test]
    fn the_wrapped_argv_binds_the_real_shells_before_covering_them_and_ends_with_the_agent() {
        if on_path(BWRAP, &[]).is_none() {
            let error = wrap(&["agent".into()], Path::new("/r"), &[]).unwrap_err();
            assert!(error.contains("bubblewrap") && error.contains("apt-get install bubblewrap"), "{error}");
            return;
        }
        let scratch = tempfile::tempdir().unwrap();
        let covered = [Covered { shell: "bash", file: "/usr/bin/bash".into(), real: scratch.path().join("real/bash") }];
        let argv = wrap(&["agent".into(), "task".into()], Path::new("/r/reloop"), &covered).unwrap();
        let real = scratch.path().join("real/bash").display().to_string();
        let at = |needle: &[&str]| argv.windows(needle.len()).position(|w| w == needle);
        let kept = at(&["--ro-bind", "/usr/bin/bash", &real]).expect("the real bash bound");
        let shim = at(&["--ro-bind", "/r/reloop", "/usr/bin/bash"]).expect("the shim bound");
        assert!(kept < shim, "{argv:?}");
        assert!(scratch.path().join("real/bash").is_file(), "the mount point is made");
        assert_eq!(&argv[argv.len() - 3..], ["--", "agent", "task"]);
    }
}
