//! Eight threads reading one file through the HIOPS path: the README's
//! library sample, kept here so that it compiles with every build (a test
//! checks that the README quotes this file's code).
//!
//!     cargo run -p hiops-path --example eight_threads

use hiops_path::{AlignedBuf, IoPath, PathConfig, Strategy};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let name = std::env::temp_dir().join(format!("eight-threads-{}.dat", std::process::id()));
    std::fs::write(&name, vec![7u8; 8 * 4096])?; // 8 blocks to read
    let file = std::fs::File::open(&name)?; // add O_DIRECT for a device's own speed
    std::fs::remove_file(&name)?; // the open file stays readable
    let path = IoPath::open(
        PathConfig {
            strategy: Strategy::Coop,
            ..PathConfig::default()
        },
        vec![hiops_hal::Target::from_file(&file)],
    )?;
    std::thread::scope(|s| {
        for t in 0..8u64 {
            let path = &path;
            s.spawn(move || {
                let mut buf = AlignedBuf::new(4096);
                path.read_at(0, &mut buf, t * 4096).expect("read"); // blocks this thread only
                assert!(buf.iter().all(|&b| b == 7));
            });
        }
    });
    println!("{}", path.description());
    Ok(())
}
