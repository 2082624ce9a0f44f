//! How scenario values of a step's parameters are read: the forms a TOML file may
//! use for a CPU list or a set of loads, and messages that say what to write.

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::ser::Serializer;
use std::fmt;

/// A word: a string, or a whole number written bare (`dma_latency = 0`).
pub fn word<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
            Ok(s.to_string())
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
    }
    d.deserialize_any(V)
}

/// A number: written bare (`1.5`, `2`) or as a string (`"1.5"`).
pub fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = f64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a number such as 1.5")
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<f64, E> {
            s.trim()
                .parse()
                .map_err(|_| E::custom(format!("'{s}' is not a number (e.g. 1.5)")))
        }
    }
    d.deserialize_any(V)
}

/// Load specs: one spec string or an array of them; `"none"` is no load.
pub fn loads<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a load spec string such as \"cpu:4\", an array of them, or \"none\"")
        }
        fn visit_str<E: de::Error>(self, s: &str) -> Result<Vec<String>, E> {
            Ok(vec![s.to_string()])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<String>, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.push(s);
            }
            Ok(out)
        }
    }
    let specs = d.deserialize_any(V)?;
    Ok(specs.into_iter().filter(|s| s != "none").collect())
}

/// Load specs as a scenario writes them: `"none"`, one spec, or an array.
pub fn ser_loads<S: Serializer>(specs: &[String], s: S) -> Result<S::Ok, S::Error> {
    match specs {
        [] => s.serialize_str("none"),
        [one] => s.serialize_str(one),
        many => s.collect_seq(many),
    }
}

/// serde's wording of a value of the wrong type, said the way rtlab's other
/// errors are: `must be a whole number (got a string "x")`.
pub fn plain(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let Some(rest) = text.strip_prefix("invalid type: ") else {
        return text
            .strip_prefix("unknown variant ")
            .map(|r| format!("{} is not one of {}", first_word(r), after_expected(r)))
            .unwrap_or(text);
    };
    match rest.split_once(", expected ") {
        Some((got, want)) => format!("must be {} (got {got})", readable(want)),
        None => text,
    }
}

fn first_word(s: &str) -> String {
    s.split(',').next().unwrap_or(s).replace('`', "'")
}

fn after_expected(s: &str) -> String {
    s.split_once("expected one of ")
        .or_else(|| s.split_once("expected "))
        .map(|(_, w)| w.replace('`', ""))
        .unwrap_or_default()
}

fn readable(want: &str) -> String {
    match want {
        "u64" | "u32" | "usize" | "i32" | "i64" | "u16" => "a whole number".into(),
        "a boolean" => "true or false".into(),
        "f64" => "a number".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct T {
        #[serde(default)]
        cpus: Option<crate::step::value::Cpus>,
        #[serde(default, deserialize_with = "loads")]
        load: Vec<String>,
        #[serde(default)]
        n: u32,
        #[serde(default)]
        on: bool,
    }

    fn t(v: serde_json::Value) -> Result<T, String> {
        serde_json::from_value(v).map_err(|e| plain(&e))
    }

    #[test]
    fn cpus_and_loads_take_every_form_a_file_may_use() {
        assert_eq!(
            t(serde_json::json!({"cpus": "0,2-3"}))
                .unwrap()
                .cpus
                .unwrap(),
            "0,2-3"
        );
        assert_eq!(
            t(serde_json::json!({"cpus": 1})).unwrap().cpus.unwrap(),
            "1"
        );
        assert_eq!(
            t(serde_json::json!({"cpus": [0, 2]}))
                .unwrap()
                .cpus
                .unwrap(),
            "0,2"
        );
        assert_eq!(
            t(serde_json::json!({"load": "cpu:4"})).unwrap().load,
            ["cpu:4"]
        );
        assert_eq!(
            t(serde_json::json!({"load": ["cpu:4", "fswalk"]}))
                .unwrap()
                .load
                .len(),
            2
        );
        assert!(t(serde_json::json!({"load": "none"}))
            .unwrap()
            .load
            .is_empty());
    }

    #[test]
    fn wrong_types_are_said_plainly() {
        let e = t(serde_json::json!({"n": "x"})).unwrap_err();
        assert_eq!(e, "must be a whole number (got string \"x\")");
        let e = t(serde_json::json!({"on": 3})).unwrap_err();
        assert_eq!(e, "must be true or false (got integer `3`)");
        assert!(t(serde_json::json!({"cpus": true}))
            .unwrap_err()
            .contains("CPU list"));
    }
}
