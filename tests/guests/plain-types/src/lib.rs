//! A component written for any host, not for toolhost: bare wit-bindgen, plain exported
//! functions of every WIT type. The suite serves each function as a tool and checks the
//! JSON forms of every type against their schemas, property-style.

wit_bindgen::generate!({ path: "wit", world: "plain-types" });

use exports::test::plain::echo::{Color, Everything, Permissions, Point, Shape};
use exports::test::plain::misc::{Counter, GuestCounter};

struct Component;

impl exports::test::plain::echo::Guest for Component {
    fn echo_bool(v: bool) -> bool {
        v
    }
    fn echo_s8(v: i8) -> i8 {
        v
    }
    fn echo_u8(v: u8) -> u8 {
        v
    }
    fn echo_s16(v: i16) -> i16 {
        v
    }
    fn echo_u16(v: u16) -> u16 {
        v
    }
    fn echo_s32(v: i32) -> i32 {
        v
    }
    fn echo_u32(v: u32) -> u32 {
        v
    }
    fn echo_s64(v: i64) -> i64 {
        v
    }
    fn echo_u64(v: u64) -> u64 {
        v
    }
    fn echo_f32(v: f32) -> f32 {
        v
    }
    fn echo_f64(v: f64) -> f64 {
        v
    }
    fn echo_char(v: char) -> char {
        v
    }
    fn echo_string(v: String) -> String {
        v
    }
    fn echo_bytes(v: Vec<u8>) -> Vec<u8> {
        v
    }
    fn echo_lists(v: Vec<Vec<String>>) -> Vec<Vec<String>> {
        v
    }
    fn echo_option(v: Option<String>) -> Option<String> {
        v
    }
    fn echo_nested_option(v: Option<Option<u8>>) -> Option<Option<u8>> {
        v
    }
    fn echo_tuple(v: (bool, i32, String)) -> (bool, i32, String) {
        v
    }
    fn echo_enum(v: Color) -> Color {
        v
    }
    fn echo_flags(v: Permissions) -> Permissions {
        v
    }
    fn echo_variant(v: Shape) -> Shape {
        v
    }
    fn echo_record(v: Point) -> Point {
        v
    }
    fn echo_result(v: Result<String, u32>) -> Result<Result<String, u32>, ()> {
        Ok(v)
    }
    fn echo_everything(v: Everything) -> Everything {
        v
    }
    fn add(a: i64, b: i64) -> i64 {
        a.wrapping_add(b)
    }
}

pub struct CounterState(std::cell::Cell<u32>);

impl GuestCounter for CounterState {
    fn new() -> Self {
        CounterState(std::cell::Cell::new(0))
    }
    fn increment(&self) -> u32 {
        self.0.set(self.0.get() + 1);
        self.0.get()
    }
}

impl exports::test::plain::misc::Guest for Component {
    type Counter = CounterState;

    fn peek(c: exports::test::plain::misc::CounterBorrow<'_>) -> u32 {
        c.get::<CounterState>().0.get()
    }
    fn fail(message: String) -> Result<u32, String> {
        Err(message)
    }
    fn fail_with(code: u32) -> Result<String, (u32, String)> {
        Err((code, format!("failed with code {code}")))
    }
    fn nothing() {}
    fn get() -> String {
        "misc".into()
    }
}

impl exports::test::plain::other::Guest for Component {
    fn get() -> String {
        "other".into()
    }
}

impl Guest for Component {
    fn greet(name: String) -> String {
        format!("Hello, {name}!")
    }
}

// Keeps the resource type referenced from the crate root.
#[allow(dead_code)]
fn _counter_type(counter: Counter) -> Counter {
    counter
}

export!(Component);
