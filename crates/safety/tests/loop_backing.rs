//! A loop device's backing file is judged as the device: an ext4 made on a
//! loop device over a file of ours and mounted refuses both the data path
//! (`check_write`) and the output gate (`check_output`) on its backing
//! file, and the filesystem stays clean. Needs root, losetup, mkfs.ext4
//! and mount; skips with a reason without them.

use hiops_safety::{check_output, check_write, create_output, Grants, OutputMode, Refusal};

use std::process::Command;

#[path = "support/mounted_loop.rs"]
mod mounted_loop;
use mounted_loop::mounted_ext4;

#[test]
fn the_backing_file_of_a_mounted_loop_device_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let img = tmp.path().join("fs.img");
    let m = match mounted_ext4(&img, &tmp.path().join("mnt"), &[]) {
        Ok(m) => m,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let none = Grants::default();
    let want = |r: Refusal| {
        let text = r.to_string();
        assert!(matches!(r, Refusal::LoopBacking { .. }), "{text}");
        assert!(
            text.contains(&format!("backing file of {}", m.dev)) && text.contains("umount"),
            "{text}"
        );
    };
    want(check_write(&img, &none).unwrap_err());
    want(check_output(&img, &none).unwrap_err());
    // Another name for the same file is the same file.
    let alias = tmp.path().join("alias.img");
    std::fs::hard_link(&img, &alias).unwrap();
    want(check_output(&alias, &none).unwrap_err());
    let e = create_output(&img, &none, OutputMode::Truncate).unwrap_err();
    assert!(e.is_refusal(), "{e}");
    assert_eq!(
        std::fs::metadata(&img).unwrap().len(),
        32 << 20,
        "not truncated"
    );
    drop(m);
    let fsck = Command::new("fsck.ext4")
        .args(["-n", "-f"])
        .arg(&img)
        .output();
    if let Ok(o) = fsck {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
    // Detached: an ordinary file again.
    assert_eq!(check_output(&img, &none), Ok(()));
}
