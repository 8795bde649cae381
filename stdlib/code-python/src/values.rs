//! JSON values into Python objects (the `input` global) and Python objects back into
//! JSON (the result).

use rustpython_vm::builtins::{PyDict, PyFloat, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};
use serde_json::{Map, Number, Value};

/// Levels of lists and dicts turned into JSON; deeper values become their `repr()`.
const MAX_DEPTH: usize = 32;

/// A JSON value as the Python object `json.loads` would give.
pub fn to_python(vm: &VirtualMachine, value: &Value) -> PyResult<PyObjectRef> {
    Ok(match value {
        Value::Null => vm.ctx.none(),
        Value::Bool(flag) => vm.ctx.new_bool(*flag).into(),
        Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(integer), _) => vm.ctx.new_int(integer).into(),
            (None, Some(unsigned)) => vm.ctx.new_int(unsigned).into(),
            _ => vm.ctx.new_float(number.as_f64().unwrap_or(f64::NAN)).into(),
        },
        Value::String(text) => vm.ctx.new_str(text.as_str()).into(),
        Value::Array(items) => {
            let items = items.iter().map(|item| to_python(vm, item)).collect::<PyResult<Vec<_>>>()?;
            vm.ctx.new_list(items).into()
        }
        Value::Object(entries) => {
            let dict = vm.ctx.new_dict();
            for (key, item) in entries {
                dict.set_item(key.as_str(), to_python(vm, item)?, vm)?;
            }
            dict.into()
        }
    })
}

/// A Python object as JSON, by the rules of the tool's `result` field.
pub fn to_json(vm: &VirtualMachine, object: &PyObjectRef) -> PyResult<Value> {
    convert(vm, object, &mut Vec::new())
}

/// `containing` holds the ids of the lists, tuples and dicts being converted around
/// `object`: one that contains itself becomes its `repr()` (`[[...]]`) where it recurs.
fn convert(vm: &VirtualMachine, object: &PyObjectRef, containing: &mut Vec<usize>) -> PyResult<Value> {
    if vm.is_none(object) {
        return Ok(Value::Null);
    }
    // `bool` is a subclass of `int`: ask first.
    if object.class().is(vm.ctx.types.bool_type) {
        return Ok(Value::Bool(object.clone().try_to_bool(vm)?));
    }
    if let Some(integer) = object.downcast_ref::<PyInt>() {
        let integer = integer.as_bigint();
        return Ok(match (i64::try_from(integer), u64::try_from(integer)) {
            (Ok(small), _) => Value::from(small),
            (_, Ok(unsigned)) => Value::from(unsigned),
            _ => Value::String(integer.to_string()),
        });
    }
    if let Some(float) = object.downcast_ref::<PyFloat>() {
        return Ok(Number::from_f64(float.to_f64()).map_or(Value::Null, Value::Number));
    }
    if let Some(text) = object.downcast_ref::<PyStr>() {
        return Ok(Value::String(text.as_wtf8().to_string_lossy().into_owned()));
    }
    let id = object.get_id();
    if containing.len() < MAX_DEPTH && !containing.contains(&id) {
        containing.push(id);
        let converted = convert_container(vm, object, containing);
        containing.pop();
        if let Some(converted) = converted? {
            return Ok(converted);
        }
    }
    Ok(Value::String(object.repr(vm)?.as_wtf8().to_string_lossy().into_owned()))
}

/// A list or tuple as an array, a dict as an object; `None` for anything else.
fn convert_container(
    vm: &VirtualMachine,
    object: &PyObjectRef,
    containing: &mut Vec<usize>,
) -> PyResult<Option<Value>> {
    // Copied out first: converting an item may run the program's own `__repr__` or
    // `__str__`, which may change the list; a guard held meanwhile would deadlock it.
    let items = if let Some(list) = object.downcast_ref::<PyList>() {
        list.borrow_vec().to_vec()
    } else if let Some(tuple) = object.downcast_ref::<PyTuple>() {
        tuple.as_slice().to_vec()
    } else if let Some(dict) = object.downcast_ref::<PyDict>() {
        let mut entries = Map::new();
        for (key, item) in dict.items_vec() {
            let key = match key.downcast_ref::<PyStr>() {
                Some(text) => text.as_wtf8().to_string_lossy().into_owned(),
                None => key.str(vm)?.as_wtf8().to_string_lossy().into_owned(),
            };
            entries.insert(key, convert(vm, &item, containing)?);
        }
        return Ok(Some(Value::Object(entries)));
    } else {
        return Ok(None);
    };
    items
        .iter()
        .map(|item| convert(vm, item, containing))
        .collect::<PyResult<_>>()
        .map(|items| Some(Value::Array(items)))
}
