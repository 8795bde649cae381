//! WIT signatures of exported functions, for people.
//!
//! WIT signatures of exported functions, for people: `toolhost inspect` and the
//! descriptions of undocumented tools. Types are written by structure (wasmtime's
//! reflection knows a record's fields, not the record's name).

use wasmtime::component::Type;

/// `name: func(a: u32, b: string) -> result<string, string>`.
pub(crate) fn function(name: &str, params: &[(String, Type)], result: Option<&Type>) -> String {
    let params: Vec<String> = params.iter().map(|(name, ty)| format!("{name}: {}", wit(ty))).collect();
    let result = result.map(|ty| format!(" -> {}", wit(ty))).unwrap_or_default();
    format!("{name}: func({}){result}", params.join(", "))
}

/// A type in WIT syntax.
pub(crate) fn wit(ty: &Type) -> String {
    let joined = |items: Vec<String>| items.join(", ");
    match ty {
        Type::Bool => "bool".into(),
        Type::S8 => "s8".into(),
        Type::U8 => "u8".into(),
        Type::S16 => "s16".into(),
        Type::U16 => "u16".into(),
        Type::S32 => "s32".into(),
        Type::U32 => "u32".into(),
        Type::S64 => "s64".into(),
        Type::U64 => "u64".into(),
        Type::Float32 => "f32".into(),
        Type::Float64 => "f64".into(),
        Type::Char => "char".into(),
        Type::String => "string".into(),
        Type::List(list) => format!("list<{}>", wit(&list.ty())),
        Type::FixedLengthList(list) => format!("list<{}, {}>", wit(&list.ty()), list.len()),
        Type::Map(map) => format!("map<{}, {}>", wit(&map.key()), wit(&map.value())),
        Type::Record(record) => {
            format!("record {{ {} }}", joined(record.fields().map(|f| format!("{}: {}", f.name, wit(&f.ty))).collect()))
        }
        Type::Tuple(tuple) => format!("tuple<{}>", joined(tuple.types().map(|t| wit(&t)).collect())),
        Type::Variant(variant) => {
            let cases = variant.cases().map(|case| match case.ty {
                Some(ty) => format!("{}({})", case.name, wit(&ty)),
                None => case.name.to_owned(),
            });
            format!("variant {{ {} }}", joined(cases.collect()))
        }
        Type::Enum(names) => format!("enum {{ {} }}", joined(names.names().map(str::to_owned).collect())),
        Type::Option(option) => format!("option<{}>", wit(&option.ty())),
        Type::Result(result) => match (result.ok(), result.err()) {
            (None, None) => "result".into(),
            (Some(ok), None) => format!("result<{}>", wit(&ok)),
            (None, Some(err)) => format!("result<_, {}>", wit(&err)),
            (Some(ok), Some(err)) => format!("result<{}, {}>", wit(&ok), wit(&err)),
        },
        Type::Flags(flags) => format!("flags {{ {} }}", joined(flags.names().map(str::to_owned).collect())),
        Type::Own(_) => "own<resource>".into(),
        Type::Borrow(_) => "borrow<resource>".into(),
        Type::Future(_) => "future".into(),
        Type::Stream(_) => "stream".into(),
        Type::ErrorContext => "error-context".into(),
    }
}
