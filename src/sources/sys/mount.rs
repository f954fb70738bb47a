//! Mounting tracefs, and unmounting what cidscope mounted.

use std::io;

/// `mount -t tracefs nodev PATH`.
pub fn mount_tracefs(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // SAFETY: all strings are NUL-terminated and outlive the call; no data argument.
    let r = unsafe {
        libc::mount(
            c"nodev".as_ptr(),
            target.as_ptr(),
            c"tracefs".as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `umount -l PATH`: detached at once, gone when the last user lets go (an event descriptor
/// still open keeps nothing busy).
pub fn unmount(path: &std::path::Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path holds a NUL byte"))?;
    // SAFETY: the string is NUL-terminated and outlives the call.
    let r = unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
