//! `${VAR}` expansion (`jobfile::expand`) against its bound: the input's
//! first two bytes are the bound (up to 64 KiB, so inputs reach it), the
//! third how many times a variable's value repeats its name (`${ab}` with 3
//! is `ababab`; `${}` is unset), the rest values, one a line, expanded in
//! turn from one [`Room`]. Each value comes out as it does with the whole
//! bound, until the one whose expansion would pass the bound, which is
//! refused in one line; what was taken is exactly what came out.
#![no_main]

use hiops_fio::jobfile::{expand, Origin, Room, MAX_EXPANDED_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [a, b, times, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let bound = u16::from_le_bytes([*a, *b]) as u64;
    let env = |name: &str| (!name.is_empty()).then(|| name.repeat(*times as usize));
    let origin = Origin {
        file: None,
        line: 1,
    };
    let (mut small, mut whole) = (Room::of(bound), Room::full());
    let mut out = 0u64;
    for value in text.split('\n') {
        let want = expand(value, &env, &origin, &mut whole);
        let before = small.left();
        match (expand(value, &env, &origin, &mut small), want) {
            (Ok(got), Ok(want)) => {
                assert_eq!(got, want);
                out += got.len() as u64;
                assert_eq!(before - small.left(), got.len() as u64);
            }
            (Err(e), want) => {
                let e = e.to_string();
                // A value is shown cut to 64 characters, each escaped to 10 at most.
                assert!(!e.contains('\n') && e.len() < 1024, "{e}");
                match want {
                    // The bound: the whole expansion does not fit what was left.
                    Ok(w) => assert!(w.len() as u64 > before, "{e}"),
                    // The value's own error, or the bound met before it.
                    Err(w) => assert!(
                        w.to_string() == e || e.contains("once their variables are expanded"),
                        "{e} / {w}"
                    ),
                }
                break;
            }
            (Ok(got), Err(e)) => panic!("{value:?}: {got:?} under the bound, {e} without"),
        }
        assert!(out <= bound && bound - small.left() == out);
    }
    assert!(MAX_EXPANDED_BYTES - whole.left() >= out);
});
