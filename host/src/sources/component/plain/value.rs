//! JSON values to WIT values and back, by the WIT type.
//!
//! JSON values to WIT values and back, by the WIT type, as [`super::schema`] describes
//! them. Input has passed the schema already; the conversion still checks everything
//! it relies on and says where a value is wrong, rather than trusting the check.

use base64::Engine as _;
use serde_json::{Map, Value, json};
use wasmtime::component::types::{Flags, OptionType, Record, ResultType, Tuple, Variant};
use wasmtime::component::{Type, Val};

use crate::error::Violation;
use crate::sources::component::plain::schema::NON_FINITE;

/// A value that does not fit its type, at a JSON Pointer.
fn wrong(pointer: &str, reason: impl Into<String>) -> Violation {
    Violation { pointer: pointer.to_owned(), reason: reason.into() }
}

/// The WIT value of `json` as a `ty`; `pointer` locates it in the input.
pub(crate) fn to_val(ty: &Type, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let expected = |what: &str| expected(pointer, what, json);
    Ok(match ty {
        Type::Bool => Val::Bool(json.as_bool().ok_or_else(|| expected("a boolean"))?),
        Type::S8 => Val::S8(integer(json, pointer)?),
        Type::U8 => Val::U8(integer(json, pointer)?),
        Type::S16 => Val::S16(integer(json, pointer)?),
        Type::U16 => Val::U16(integer(json, pointer)?),
        Type::S32 => Val::S32(integer(json, pointer)?),
        Type::U32 => Val::U32(integer(json, pointer)?),
        Type::S64 => Val::S64(integer(json, pointer)?),
        Type::U64 => Val::U64(integer(json, pointer)?),
        Type::Float32 => {
            let value = float(json, pointer)?;
            if value.is_finite() && value.abs() > f64::from(f32::MAX) {
                return Err(wrong(pointer, format!("{value} is out of the range of f32")));
            }
            Val::Float32(value as f32)
        }
        Type::Float64 => Val::Float64(float(json, pointer)?),
        Type::Char => char_val(json, pointer)?,
        Type::String => Val::String(json.as_str().ok_or_else(|| expected("a string"))?.to_owned()),
        Type::List(list) if list.ty() == Type::U8 => {
            let text = json.as_str().ok_or_else(|| expected("base64 text"))?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| wrong(pointer, format!("not base64: {e}")))?;
            Val::List(bytes.into_iter().map(Val::U8).collect())
        }
        Type::List(list) => Val::List(items(&list.ty(), json, pointer, None)?),
        Type::FixedLengthList(list) => Val::FixedLengthList(items(&list.ty(), json, pointer, Some(list.len()))?),
        Type::Map(map) => Val::Map(map_entries(&map.key(), &map.value(), json, pointer)?),
        Type::Record(record) => record_val(record, json, pointer)?,
        Type::Tuple(tuple) => tuple_val(tuple, json, pointer)?,
        Type::Variant(variant) => variant_val(variant, json, pointer)?,
        Type::Enum(names) => {
            let name = json.as_str().filter(|name| names.names().any(|n| n == *name));
            Val::Enum(name.ok_or_else(|| expected("one of the enum's names"))?.to_owned())
        }
        Type::Option(option) => option_val(option, json, pointer)?,
        Type::Result(result) => result_val(result, json, pointer)?,
        Type::Flags(flags) => flags_val(flags, json, pointer)?,
        Type::Own(_) | Type::Borrow(_) | Type::Future(_) | Type::Stream(_) | Type::ErrorContext => {
            return Err(wrong(pointer, "this type has no JSON form"));
        }
    })
}

fn expected(pointer: &str, what: &str, json: &Value) -> Violation {
    wrong(pointer, format!("expected {what}, got {json}"))
}

fn char_val(json: &Value, pointer: &str) -> Result<Val, Violation> {
    let mut chars = json.as_str().unwrap_or_default().chars();
    match (json.is_string(), chars.next(), chars.next()) {
        (true, Some(c), None) => Ok(Val::Char(c)),
        _ => Err(expected(pointer, "exactly one character", json)),
    }
}

fn record_val(record: &Record, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let object = json.as_object().ok_or_else(|| expected(pointer, "an object", json))?;
    if let Some(extra) = object.keys().find(|key| record.fields().all(|field| field.name != key.as_str())) {
        return Err(wrong(pointer, format!("no field named `{extra}`")));
    }
    let mut fields = Vec::with_capacity(record.fields().len());
    for field in record.fields() {
        let at = format!("{pointer}/{}", escape(field.name));
        let value = match (object.get(field.name), &field.ty) {
            (Some(value), ty) => to_val(ty, value, &at)?,
            (None, Type::Option(_)) => Val::Option(None),
            (None, _) => return Err(wrong(pointer, format!("the field `{}` is missing", field.name))),
        };
        fields.push((field.name.to_owned(), value));
    }
    Ok(Val::Record(fields))
}

fn tuple_val(tuple: &Tuple, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let types: Vec<Type> = tuple.types().collect();
    let array = json.as_array().filter(|a| a.len() == types.len());
    let array = array.ok_or_else(|| expected(pointer, &format!("an array of {} items", types.len()), json))?;
    let values: Result<Vec<Val>, _> =
        types.iter().zip(array).enumerate().map(|(i, (ty, v))| to_val(ty, v, &format!("{pointer}/{i}"))).collect();
    Ok(Val::Tuple(values?))
}

fn variant_val(variant: &Variant, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let (tag, payload) = single_key(json, pointer)?;
    let case = variant.cases().find(|case| case.name == tag);
    let case = case.ok_or_else(|| wrong(pointer, format!("no case named `{tag}`")))?;
    Ok(Val::Variant(tag.to_owned(), payload_val(case.ty.as_ref(), payload, &format!("{pointer}/{}", escape(tag)))?))
}

fn option_val(option: &OptionType, json: &Value, pointer: &str) -> Result<Val, Violation> {
    Ok(match json {
        Value::Null => Val::Option(None),
        _ if matches!(option.ty(), Type::Option(_)) => {
            let (tag, some) = single_key(json, pointer)?;
            if tag != "some" {
                return Err(expected(pointer, "null or {\"some\": …}", json));
            }
            Val::Option(Some(Box::new(to_val(&option.ty(), some, &format!("{pointer}/some"))?)))
        }
        _ => Val::Option(Some(Box::new(to_val(&option.ty(), json, pointer)?))),
    })
}

fn result_val(result: &ResultType, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let (tag, payload) = single_key(json, pointer)?;
    let at = format!("{pointer}/{tag}");
    match tag {
        "ok" => Ok(Val::Result(Ok(payload_val(result.ok().as_ref(), payload, &at)?))),
        "err" => Ok(Val::Result(Err(payload_val(result.err().as_ref(), payload, &at)?))),
        _ => Err(expected(pointer, "{\"ok\": …} or {\"err\": …}", json)),
    }
}

fn flags_val(flags: &Flags, json: &Value, pointer: &str) -> Result<Val, Violation> {
    let array = json.as_array().ok_or_else(|| expected(pointer, "an array of flag names", json))?;
    let mut set: Vec<String> = Vec::with_capacity(array.len());
    for (i, name) in array.iter().enumerate() {
        let name = name.as_str().filter(|name| flags.names().any(|n| n == *name));
        let name = name.ok_or_else(|| wrong(&format!("{pointer}/{i}"), "not one of the flags"))?;
        if set.iter().any(|seen| seen == name) {
            return Err(wrong(&format!("{pointer}/{i}"), format!("the flag `{name}` is set twice")));
        }
        set.push(name.to_owned());
    }
    Ok(Val::Flags(set))
}

fn record_json(record: &Record, fields: &[(String, Val)]) -> Value {
    let mut object = Map::new();
    for (field, (name, value)) in record.fields().zip(fields) {
        // An absent option is left out, as the input may leave it out.
        if !matches!(value, Val::Option(None)) {
            object.insert(name.clone(), from_val(&field.ty, value));
        }
    }
    Value::Object(object)
}

/// The JSON of a WIT value of type `ty`.
pub(crate) fn from_val(ty: &Type, val: &Val) -> Value {
    match (ty, val) {
        (_, Val::Bool(b)) => json!(b),
        (_, Val::S8(n)) => json!(n),
        (_, Val::U8(n)) => json!(n),
        (_, Val::S16(n)) => json!(n),
        (_, Val::U16(n)) => json!(n),
        (_, Val::S32(n)) => json!(n),
        (_, Val::U32(n)) => json!(n),
        (_, Val::S64(n)) => json!(n),
        (_, Val::U64(n)) => json!(n),
        (_, Val::Float32(f)) => float_json(shortest(*f)),
        (_, Val::Float64(f)) => float_json(*f),
        (_, Val::Char(c)) => json!(c.to_string()),
        (_, Val::String(s)) => json!(s),
        (Type::List(list), Val::List(items)) if list.ty() == Type::U8 => {
            let bytes: Vec<u8> = items.iter().map(|item| if let Val::U8(b) = item { *b } else { 0 }).collect();
            json!(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        (Type::List(list), Val::List(items)) => {
            Value::Array(items.iter().map(|item| from_val(&list.ty(), item)).collect())
        }
        (Type::FixedLengthList(list), Val::FixedLengthList(items)) => {
            Value::Array(items.iter().map(|item| from_val(&list.ty(), item)).collect())
        }
        (Type::Map(map), Val::Map(entries)) => map_json(&map.key(), &map.value(), entries),
        (Type::Record(record), Val::Record(fields)) => record_json(record, fields),
        (Type::Tuple(tuple), Val::Tuple(values)) => {
            Value::Array(tuple.types().zip(values).map(|(ty, value)| from_val(&ty, value)).collect())
        }
        (Type::Variant(variant), Val::Variant(tag, payload)) => {
            let ty = variant.cases().find(|case| case.name == tag).and_then(|case| case.ty);
            json!({ tag: payload_json(ty.as_ref(), payload.as_deref()) })
        }
        (_, Val::Enum(name)) => json!(name),
        (Type::Option(option), Val::Option(value)) => match value {
            None => Value::Null,
            Some(value) if matches!(option.ty(), Type::Option(_)) => json!({ "some": from_val(&option.ty(), value) }),
            Some(value) => from_val(&option.ty(), value),
        },
        (Type::Result(result), Val::Result(value)) => match value {
            Ok(payload) => json!({ "ok": payload_json(result.ok().as_ref(), payload.as_deref()) }),
            Err(payload) => json!({ "err": payload_json(result.err().as_ref(), payload.as_deref()) }),
        },
        (_, Val::Flags(names)) => json!(names),
        // Handles never reach here: functions that pass them are not tools.
        _ => Value::Null,
    }
}

fn integer<T: TryFrom<i64> + TryFrom<u64>>(json: &Value, pointer: &str) -> Result<T, Violation> {
    let out_of_range = || wrong(pointer, format!("{json} is not an integer in the type's range"));
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    match (json.as_i64(), json.as_u64(), json.as_f64()) {
        (Some(n), _, _) => T::try_from(n).map_err(|_| out_of_range()),
        (_, Some(n), _) => T::try_from(n).map_err(|_| out_of_range()),
        // JSON Schema's integers include `2.0` and `-0.0`: a number without a fraction.
        (_, _, Some(f)) if f.fract() == 0.0 && (-TWO_63..TWO_63).contains(&f) => {
            T::try_from(f as i64).map_err(|_| out_of_range())
        }
        (_, _, Some(f)) if f.fract() == 0.0 && (0.0..2.0 * TWO_63).contains(&f) => {
            T::try_from(f as u64).map_err(|_| out_of_range())
        }
        _ => Err(out_of_range()),
    }
}

fn float(json: &Value, pointer: &str) -> Result<f64, Violation> {
    match json {
        Value::Number(n) => n.as_f64().ok_or_else(|| wrong(pointer, "not a number")),
        Value::String(s) if s == NON_FINITE[0] => Ok(f64::NAN),
        Value::String(s) if s == NON_FINITE[1] => Ok(f64::INFINITY),
        Value::String(s) if s == NON_FINITE[2] => Ok(f64::NEG_INFINITY),
        other => Err(wrong(pointer, format!("expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", got {other}"))),
    }
}

/// The shortest decimal that reads back as the same `f32`, not its `f64` widening.
fn shortest(value: f32) -> f64 {
    if value.is_finite() { value.to_string().parse().unwrap_or(f64::from(value)) } else { f64::from(value) }
}

fn float_json(value: f64) -> Value {
    match value {
        v if v.is_nan() => json!(NON_FINITE[0]),
        v if v == f64::INFINITY => json!(NON_FINITE[1]),
        v if v == f64::NEG_INFINITY => json!(NON_FINITE[2]),
        v => json!(v),
    }
}

fn items(ty: &Type, json: &Value, pointer: &str, length: Option<u32>) -> Result<Vec<Val>, Violation> {
    let array = json.as_array().ok_or_else(|| wrong(pointer, format!("expected an array, got {json}")))?;
    if let Some(length) = length.filter(|length| *length as usize != array.len()) {
        return Err(wrong(pointer, format!("expected {length} items, got {}", array.len())));
    }
    array.iter().enumerate().map(|(i, item)| to_val(ty, item, &format!("{pointer}/{i}"))).collect()
}

fn map_entries(key: &Type, value: &Type, json: &Value, pointer: &str) -> Result<Vec<(Val, Val)>, Violation> {
    if *key == Type::String {
        let object = json.as_object().ok_or_else(|| wrong(pointer, format!("expected an object, got {json}")))?;
        return object
            .iter()
            .map(|(k, v)| Ok((Val::String(k.clone()), to_val(value, v, &format!("{pointer}/{}", escape(k)))?)))
            .collect();
    }
    let array = json.as_array().ok_or_else(|| wrong(pointer, format!("expected an array of pairs, got {json}")))?;
    let mut entries = Vec::with_capacity(array.len());
    for (i, pair) in array.iter().enumerate() {
        let at = format!("{pointer}/{i}");
        let pair =
            pair.as_array().filter(|pair| pair.len() == 2).ok_or_else(|| wrong(&at, "expected a [key, value] pair"))?;
        entries.push((to_val(key, &pair[0], &format!("{at}/0"))?, to_val(value, &pair[1], &format!("{at}/1"))?));
    }
    Ok(entries)
}

fn map_json(key: &Type, value: &Type, entries: &[(Val, Val)]) -> Value {
    if *key == Type::String {
        let object = entries
            .iter()
            .map(|(k, v)| (if let Val::String(k) = k { k.clone() } else { String::new() }, from_val(value, v)));
        return Value::Object(object.collect());
    }
    Value::Array(entries.iter().map(|(k, v)| json!([from_val(key, k), from_val(value, v)])).collect())
}

/// The one key and its value of a tagged object.
fn single_key<'a>(json: &'a Value, pointer: &str) -> Result<(&'a str, &'a Value), Violation> {
    match json.as_object() {
        Some(object) if object.len() == 1 => {
            let (tag, payload) = object.iter().next().expect("one entry");
            Ok((tag.as_str(), payload))
        }
        _ => Err(wrong(pointer, format!("expected an object with exactly one key (the case), got {json}"))),
    }
}

fn payload_val(ty: Option<&Type>, payload: &Value, pointer: &str) -> Result<Option<Box<Val>>, Violation> {
    match ty {
        Some(ty) => Ok(Some(Box::new(to_val(ty, payload, pointer)?))),
        None if payload.is_null() => Ok(None),
        None => Err(wrong(pointer, format!("this case carries nothing: expected null, got {payload}"))),
    }
}

fn payload_json(ty: Option<&Type>, payload: Option<&Val>) -> Value {
    match (ty, payload) {
        (Some(ty), Some(payload)) => from_val(ty, payload),
        _ => Value::Null,
    }
}

/// A JSON Pointer reference token (RFC 6901).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_include_numbers_without_a_fraction_as_json_schema_does() {
        assert_eq!(integer::<u16>(&json!(-0.0), "").ok(), Some(0));
        assert_eq!(integer::<u16>(&json!(2.0), "").ok(), Some(2));
        assert_eq!(integer::<i64>(&json!(-3.0e3), "").ok(), Some(-3000));
        assert!(integer::<u16>(&json!(2.5), "").is_err());
        assert!(integer::<u16>(&json!(70000.0), "").is_err());
        assert!(integer::<u16>(&json!(-1.0), "").is_err());
        assert_eq!(integer::<u64>(&json!(u64::MAX), "").ok(), Some(u64::MAX));
    }
}
