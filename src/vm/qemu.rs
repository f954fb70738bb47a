//! QEMU: finding it, choosing the accelerator, checking the kernel image, the command line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accel {
    Kvm,
    Tcg,
}

impl Accel {
    pub fn name(self) -> &'static str {
        match self {
            Accel::Kvm => "kvm",
            Accel::Tcg => "tcg",
        }
    }
}

/// `--accel`: `auto` tries KVM where `/dev/kvm` opens and falls back to TCG by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum AccelChoice {
    #[default]
    Auto,
    Kvm,
    Tcg,
}

pub const QEMU: &str = "qemu-system-x86_64";

/// The QEMU binary: `--qemu PATH`, else `qemu-system-x86_64` in `PATH`.
pub fn find(explicit: Option<&Path>) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if let Some(p) = explicit {
        if runnable(p) {
            return Ok(p.to_path_buf());
        }
        let why = if p.exists() {
            "is not an executable file"
        } else {
            "does not exist"
        };
        return Err(format!(
            "--qemu {}: {why}; expected the path of {QEMU}",
            p.display()
        ));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        let p = dir.join(QEMU);
        if runnable(&p) {
            return Ok(p);
        }
    }
    Err(format!(
        "{QEMU} was not found in PATH. cidscope vm needs QEMU on the host (nothing else):\n  \
         Debian, Ubuntu: sudo apt install qemu-system-x86\n  \
         Fedora: sudo dnf install qemu-system-x86-core\n  \
         Arch: sudo pacman -S qemu-system-x86\n  \
         macOS (Homebrew): brew install qemu\n\
         or name the binary with --qemu PATH"
    ))
}

/// Whether this user may use KVM (`/dev/kvm` opens read-write); the reason when not.
pub fn kvm_usable() -> Result<(), String> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .map(|_| ())
        .map_err(|e| format!("/dev/kvm: {e}"))
}

/// What kind of kernel image a file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Image {
    /// A bzImage, with the version string of its setup header when it has one.
    BzImage { version: Option<String> },
    /// An ELF `vmlinux` (QEMU boots it through its PVH note).
    Elf,
}

/// Checks that `path` looks like a kernel QEMU can boot: a bzImage (`HdrS` at 0x202) or ELF.
pub fn check_kernel(path: &Path) -> Result<Image, String> {
    let data = std::fs::read(path).map_err(|e| format!("--kernel {}: {e}", path.display()))?;
    if data.len() > 0x210 && &data[0x202..0x206] == b"HdrS" {
        // setup_header.kernel_version: offset of the version string, minus 0x200
        let ptr = u16::from_le_bytes([data[0x20e], data[0x20f]]) as usize;
        let version = (ptr != 0)
            .then(|| data.get(ptr + 0x200..))
            .flatten()
            .and_then(|s| {
                let end = s.iter().take(256).position(|&c| c == 0)?;
                Some(String::from_utf8_lossy(&s[..end]).into_owned())
            });
        return Ok(Image::BzImage { version });
    }
    if data.starts_with(b"\x7fELF") {
        return Ok(Image::Elf);
    }
    Err(format!(
        "--kernel {}: not a Linux kernel image (expected a bzImage, with \"HdrS\" at offset 0x202, or an ELF vmlinux; found {} bytes starting {:?})",
        path.display(),
        data.len(),
        String::from_utf8_lossy(&data[..data.len().min(16)])
    ))
}

/// The `config-*` beside a kernel image: `config-SUFFIX` for `vmlinuz-SUFFIX` (Debian's
/// /boot), `config-RELEASE`, `config`, or the `.config` of the build tree of
/// `arch/x86/boot/bzImage`.
pub fn config_beside(kernel: &Path, release: Option<&str>) -> Option<PathBuf> {
    let dir = kernel.parent()?;
    let name = kernel.file_name()?.to_string_lossy().into_owned();
    let mut cands = Vec::new();
    for pre in ["vmlinuz-", "bzImage-", "vmlinux-"] {
        if let Some(suffix) = name.strip_prefix(pre) {
            cands.push(dir.join(format!("config-{suffix}")));
        }
    }
    if let Some(r) = release {
        cands.push(dir.join(format!("config-{r}")));
    }
    cands.push(dir.join("config"));
    cands.push(dir.join(".config"));
    if let Some(tree) = dir.parent().and_then(Path::parent).and_then(Path::parent) {
        cands.push(tree.join(".config"));
    }
    cands.into_iter().find(|p| p.is_file())
}

/// Options the guest cannot do without, built in (the initramfs holds no modules).
const NEEDED: &[(&str, &str)] = &[
    ("CONFIG_BLK_DEV_INITRD", "the initramfs"),
    ("CONFIG_DEVTMPFS", "/dev"),
    ("CONFIG_SERIAL_8250_CONSOLE", "the serial console"),
    ("CONFIG_VIRTIO_PCI", "the virtio-serial device"),
    ("CONFIG_VIRTIO_CONSOLE", "/dev/hvc0, the capture's way out"),
    ("CONFIG_RSEQ", "rseq and its rseq_update tracepoint"),
    ("CONFIG_EVENT_TRACING", "the tracepoints"),
];

/// What a kernel config lacks for `cidscope vm` (`attach`: also CONFIG_PERF_EVENTS).
pub fn config_problems(config: &str, attach: bool) -> Vec<String> {
    let set = |k: &str| config.lines().any(|l| l.strip_prefix(k) == Some("=y"));
    let mut v: Vec<String> = NEEDED
        .iter()
        .chain(attach.then_some(&("CONFIG_PERF_EVENTS", "perf_event_open")))
        .filter(|(k, _)| !set(k))
        .map(|(k, why)| format!("{k}=y ({why})"))
        .collect();
    if !v.is_empty() {
        v.insert(0, "the kernel's config lacks".into());
    }
    v
}

/// Everything one QEMU run needs.
#[derive(Clone, Debug)]
pub struct Plan {
    pub qemu: PathBuf,
    pub accel: Accel,
    pub cpus: u32,
    pub memory_mb: u32,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub append: String,
    pub console: PathBuf,
    pub socket: PathBuf,
}

/// QEMU's arguments: no default devices, no display; the serial console to a file; one
/// virtio-serial port (`/dev/hvc0` in the guest) connected to our socket.
pub fn args(p: &Plan) -> Vec<OsString> {
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |s: &str| a.push(s.into());
    push("-nodefaults");
    push("-no-user-config");
    push("-display");
    push("none");
    push("-monitor");
    push("none");
    push("-no-reboot");
    match p.accel {
        // Multi-threaded TCG crashed the guest at boot at 16 vCPUs (an int3 Oops while the kernel
        // patched its jump labels); single-threaded TCG did not.
        Accel::Tcg => {
            push("-accel");
            push("tcg,thread=single");
            push("-cpu");
            push("max");
        }
        Accel::Kvm => {
            push("-accel");
            push("kvm");
            push("-cpu");
            push("host");
        }
    }
    push("-smp");
    push(&p.cpus.to_string());
    push("-m");
    push(&p.memory_mb.to_string());
    // file paths in -chardev options: a comma is written twice
    let opt = |p: &Path| p.display().to_string().replace(',', ",,");
    push("-chardev");
    push(&format!("file,id=con,path={}", opt(&p.console)));
    push("-serial");
    push("chardev:con");
    push("-device");
    push("virtio-serial-pci");
    push("-chardev");
    push(&format!("socket,id=cap,path={}", opt(&p.socket)));
    push("-device");
    push("virtconsole,chardev=cap");
    push("-append");
    push(&p.append);
    a.push("-kernel".into());
    a.push(p.kernel.clone().into_os_string());
    a.push("-initrd".into());
    a.push(p.initrd.clone().into_os_string());
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_qemu_says_how_to_get_it() {
        let e = find(Some(Path::new("/nonexistent/qemu"))).unwrap_err();
        assert!(
            e.contains("--qemu /nonexistent/qemu: does not exist"),
            "{e}"
        );
        let f = std::env::temp_dir().join(format!("cidscope-noexec-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        let e = find(Some(&f)).unwrap_err();
        assert!(e.contains("not an executable"), "{e}");
        std::fs::remove_file(&f).ok();
    }

    #[test]
    fn kernel_images_are_told_from_other_files() {
        let dir = std::env::temp_dir().join(format!("cidscope-img-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut bz = vec![0u8; 0x400];
        bz[0x202..0x206].copy_from_slice(b"HdrS");
        bz[0x20e..0x210].copy_from_slice(&0x100u16.to_le_bytes());
        bz[0x300..0x305].copy_from_slice(b"6.18\0");
        std::fs::write(dir.join("vmlinuz-6.18"), &bz).unwrap();
        assert_eq!(
            check_kernel(&dir.join("vmlinuz-6.18")).unwrap(),
            Image::BzImage {
                version: Some("6.18".into())
            }
        );
        std::fs::write(dir.join("notes.txt"), b"hello, not a kernel").unwrap();
        let e = check_kernel(&dir.join("notes.txt")).unwrap_err();
        assert!(e.contains("not a Linux kernel image"), "{e}");
        assert!(check_kernel(&dir.join("missing")).is_err());
        // the config beside it
        assert_eq!(config_beside(&dir.join("vmlinuz-6.18"), None), None);
        std::fs::write(dir.join("config-6.18"), "CONFIG_HZ=300\n").unwrap();
        assert_eq!(
            config_beside(&dir.join("vmlinuz-6.18"), None),
            Some(dir.join("config-6.18"))
        );
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn configs_that_cannot_run_the_guest_are_named() {
        let good: String = NEEDED.iter().map(|(k, _)| format!("{k}=y\n")).collect();
        assert!(config_problems(&good, false).is_empty());
        let p = config_problems(&good, true);
        assert_eq!(p.len(), 2);
        assert!(p[1].starts_with("CONFIG_PERF_EVENTS=y"));
        let m = good.replace("CONFIG_VIRTIO_CONSOLE=y", "CONFIG_VIRTIO_CONSOLE=m");
        let p = config_problems(&m, false);
        assert!(p[1].contains("CONFIG_VIRTIO_CONSOLE=y (/dev/hvc0"), "{p:?}");
        // the test kernel's own config, when there is one beside it
        if let Some(f) =
            std::env::var_os("CIDSCOPE_VM_KERNEL").and_then(|k| config_beside(Path::new(&k), None))
        {
            let t = std::fs::read_to_string(&f).unwrap();
            assert!(config_problems(&t, true).is_empty(), "{}", f.display());
        }
    }

    #[test]
    fn tcg_is_single_threaded_and_the_capture_port_is_a_virtconsole() {
        let p = Plan {
            qemu: "q".into(),
            accel: Accel::Tcg,
            cpus: 16,
            memory_mb: 2048,
            kernel: "/k".into(),
            initrd: "/i".into(),
            append: "console=ttyS0".into(),
            console: "/t/con,sole".into(),
            socket: "/t/s".into(),
        };
        let a: Vec<String> = args(&p)
            .iter()
            .map(|s| s.to_string_lossy().into())
            .collect();
        let j = a.join(" ");
        assert!(j.contains("-accel tcg,thread=single -cpu max"), "{j}");
        assert!(j.contains("-smp 16 -m 2048"), "{j}");
        assert!(j.contains("path=/t/con,,sole"), "{j}");
        assert!(j.contains("-device virtconsole,chardev=cap"), "{j}");
        let k = args(&Plan {
            accel: Accel::Kvm,
            ..p
        });
        assert!(k.iter().any(|s| s == "kvm"));
    }
}
