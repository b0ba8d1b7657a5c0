//! A command's clap arguments read into the library's options: most fields
//! carry over under the same name, a few are given.

/// `Ty { a: args.a, b: args.b, .., x: given }`: the named fields moved out
/// of `args`, then those given with a value (which may use the fields not
/// moved).
macro_rules! options_from {
    ($args:ident => $($ty:ident)::+ { $($field:ident),* $(,)? } $(with { $($name:ident: $value:expr),* $(,)? })?) => {
        $($ty)::+ { $($field: $args.$field,)* $($($name: $value,)*)? }
    };
}

pub(crate) use options_from;
