//! Values of a step's parameters that are written as text: durations, sizes
//! and CPU lists. Each is read once, where it is given (by clap from a flag,
//! by serde from a scenario key or a stored run), and keeps both what was
//! written and what it reads as, or why it does not read. The text is what
//! is shown, stored and serialised, as rtlab always stored it (`"200us"`); the
//! value is what the step uses. A value that does not read is refused by the
//! step's check, naming its flag, with everything else that is wrong before
//! anything runs.

use crate::error::bad_flag;
use crate::units::{parse_duration, parse_size, DefaultUnit};
use anyhow::Result;
use rtlab_engine::rt::cpuset::CpuList;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

/// The unit a bare number of a duration is read in.
pub trait Unit {
    /// That unit.
    const UNIT: DefaultUnit;
}

/// Bare numbers are µs (`-i 200`, as cyclictest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Us;
/// Bare numbers are ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ms;
/// Bare numbers are seconds (`-D 30`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sec;

impl Unit for Us {
    const UNIT: DefaultUnit = DefaultUnit::Micros;
}
impl Unit for Ms {
    const UNIT: DefaultUnit = DefaultUnit::Millis;
}
impl Unit for Sec {
    const UNIT: DefaultUnit = DefaultUnit::Seconds;
}

/// A duration as written (`"200us"`; a bare number in unit `U`), read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dur<U> {
    text: String,
    ns: Result<u64, String>,
    unit: PhantomData<U>,
}

impl<U: Unit> Dur<U> {
    /// `text`, read.
    pub fn new(text: impl Into<String>) -> Dur<U> {
        let text = text.into();
        Dur {
            ns: parse_duration(&text, U::UNIT),
            text,
            unit: PhantomData,
        }
    }

    /// `ns` written exactly, with its unit (`1ms`, `1500ns`).
    pub fn exact(ns: u64) -> Dur<U> {
        Dur::new(crate::units::exact(ns))
    }

    /// The value (ns), zero included; a value that does not read is refused
    /// naming `flag`.
    pub fn ns(&self, flag: &str) -> Result<u64> {
        self.ns.clone().map_err(|e| bad_flag(flag, e))
    }

    /// The value (ns), which must be above zero; refused naming `flag`.
    pub fn positive(&self, flag: &str) -> Result<u64> {
        match self.ns(flag)? {
            0 => Err(bad_flag(
                flag,
                format!("'{}' is zero; it must be above zero", self.text.trim()),
            )),
            ns => Ok(ns),
        }
    }

    /// The value (ns) when it reads and is above zero, for what shows a run.
    pub fn get(&self) -> Option<u64> {
        self.ns.clone().ok().filter(|&ns| ns > 0)
    }
}

impl<U> Dur<U> {
    /// What was written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de, U: Unit> Deserialize<'de> for Dur<U> {
    /// A duration is a string with a unit (`"200us"`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration string with a unit, e.g. \"200us\"")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
                Ok(s.to_string())
            }
        }
        d.deserialize_any(V).map(Dur::new)
    }
}

/// An optional duration, above zero when given; refused naming `flag`.
pub fn opt_positive<U: Unit>(flag: &str, d: &Option<Dur<U>>) -> Result<Option<u64>> {
    d.as_ref().map(|d| d.positive(flag)).transpose()
}

/// A size in bytes as written (`"256M"`, `4096`), read once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Size {
    text: String,
    bytes: Result<u64, String>,
}

impl Size {
    /// `text`, read.
    pub fn new(text: impl Into<String>) -> Size {
        let text = text.into();
        Size {
            bytes: parse_size(&text),
            text,
        }
    }

    /// The value (bytes), zero included; refused naming `flag`.
    pub fn bytes(&self, flag: &str) -> Result<u64> {
        self.bytes.clone().map_err(|e| bad_flag(flag, e))
    }

    /// The value (bytes) when it reads, for what shows a run.
    pub fn get(&self) -> Option<u64> {
        self.bytes.clone().ok()
    }

    /// What was written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de> Deserialize<'de> for Size {
    /// A size is a string with a unit (`"256M"`) or a whole number of bytes.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"256M\" or a whole number of bytes")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
                Ok(s.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
                Err(E::custom(format!("{v} is not a size; give bytes ≥ 0")))
            }
        }
        d.deserialize_any(V).map(Size::new)
    }
}

/// A CPU list as written (`"0,2-3"`; `"all"` where a probe takes it), read
/// once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpus {
    text: String,
    list: Result<CpuList, String>,
}

impl Cpus {
    /// `text`, read.
    pub fn new(text: impl Into<String>) -> Cpus {
        let text = text.into();
        Cpus {
            list: CpuList::parse(&text).map_err(|e| e.to_string()),
            text,
        }
    }

    /// The list of `cpus`, written as a list (`0-3`).
    pub fn of(cpus: Vec<usize>) -> Cpus {
        Cpus::new(CpuList::from_cpus(cpus).to_string())
    }

    /// Whether it is `all` (given alone, `-a` of latency and noise).
    pub fn is_all(&self) -> bool {
        self.text == "all"
    }

    /// The CPUs; a list that does not read, or an empty one, is refused
    /// naming `flag`.
    pub fn list(&self, flag: &str) -> Result<CpuList> {
        let list = self.list.clone().map_err(|e| bad_flag(flag, e))?;
        if list.is_empty() {
            return Err(bad_flag(flag, "the list is empty"));
        }
        Ok(list)
    }

    /// What was written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de> Deserialize<'de> for Cpus {
    /// A CPU list string (`"0,2-3"`), one CPU number, or an array of CPU
    /// numbers (`[0, 2]`), kept as the list string.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = String;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a CPU list string such as \"0,2-3\", a CPU number, or an array of CPU numbers",
                )
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<String, E> {
                Ok(s.to_string())
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
                Ok(v.to_string())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<String, A::Error> {
                let mut parts = Vec::new();
                while let Some(c) = seq.next_element::<u64>()? {
                    parts.push(c.to_string());
                }
                Ok(parts.join(","))
            }
        }
        d.deserialize_any(V).map(Cpus::new)
    }
}

/// How a [`Word`] reads: its value from the text, or why not.
pub trait Read {
    /// What the text reads as.
    type Value: Clone + fmt::Debug + PartialEq;
    /// The value of `text`, or what is wrong with it.
    fn read(text: &str) -> Result<Self::Value, String>;
}

/// A value written as a word (`"10kHz"`, `"100ppm"`; a bare number in a
/// scenario), read once by `R`.
#[derive(Debug, Clone, PartialEq)]
pub struct Word<R: Read> {
    text: String,
    value: Result<R::Value, String>,
}

impl<R: Read> Word<R> {
    /// `text`, read.
    pub fn new(text: impl Into<String>) -> Word<R> {
        let text = text.into();
        Word {
            value: R::read(&text),
            text,
        }
    }

    /// The value; one that does not read is refused naming `flag`.
    pub fn value(&self, flag: &str) -> Result<R::Value> {
        self.value.clone().map_err(|e| bad_flag(flag, e))
    }

    /// The value when it reads, for what shows a run.
    pub fn get(&self) -> Option<R::Value> {
        self.value.clone().ok()
    }

    /// What was written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl<'de, R: Read> Deserialize<'de> for Word<R> {
    /// A word: a string, or a number written bare (`max_noise = 100`).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::de::word(d).map(Word::new)
    }
}

/// What every value written as text has: it is made from its text (and by
/// clap through `FromStr`, which never fails: a text that does not read is
/// refused by the step's check, naming its flag), shown and serialised as
/// that text, and equal to it.
macro_rules! written {
    ($ty:ty, [$($generics:tt)*]) => {
        impl<$($generics)*> From<&str> for $ty {
            fn from(s: &str) -> Self {
                <$ty>::new(s)
            }
        }

        impl<$($generics)*> FromStr for $ty {
            type Err = Infallible;
            fn from_str(s: &str) -> Result<Self, Infallible> {
                Ok(<$ty>::new(s))
            }
        }

        impl<$($generics)*> PartialEq<&str> for $ty {
            fn eq(&self, other: &&str) -> bool {
                self.text() == *other
            }
        }

        impl<$($generics)*> fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.text())
            }
        }

        impl<$($generics)*> Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.text())
            }
        }
    };
}

written!(Dur<U>, [U: Unit]);
written!(Size, []);
written!(Cpus, []);
written!(Word<R>, [R: Read]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_is_none() {
        #[derive(Debug, Deserialize, PartialEq)]
        struct O {
            #[serde(default)]
            cpus: Option<Cpus>,
            #[serde(default)]
            d: Option<Dur<Sec>>,
            #[serde(default)]
            s: Option<Size>,
        }
        let null = serde_json::json!({"cpus": null, "d": null, "s": null});
        let none: O = serde_json::from_value(null).unwrap();
        assert_eq!((none.cpus, none.d, none.s), (None, None, None));
        let some: O =
            serde_json::from_value(serde_json::json!({"cpus": [1], "d": "1s", "s": 4})).unwrap();
        assert_eq!(
            (some.cpus.unwrap(), some.d.unwrap(), some.s.unwrap()),
            ("1".into(), "1s".into(), "4".into())
        );
        let e = serde_json::from_value::<O>(serde_json::json!({"d": 5})).unwrap_err();
        assert!(e.to_string().contains("duration string"), "{e}");
    }

    #[test]
    fn a_duration_keeps_its_text_and_reads_once() {
        let d: Dur<Us> = "200".parse().unwrap();
        assert_eq!((d.text(), d.ns("--x").unwrap()), ("200", 200_000));
        let d = Dur::<Sec>::new("2");
        assert_eq!(d.positive("-D").unwrap(), 2_000_000_000);
        let zero = Dur::<Us>::new("0");
        assert_eq!(zero.ns("--distance").unwrap(), 0);
        assert_eq!(zero.get(), None);
        let e = zero.positive("--interval").unwrap_err().to_string();
        assert_eq!(e, "--interval: '0' is zero; it must be above zero");
        let e = Dur::<Us>::new("abc").ns("--interval").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("--interval: 'abc' does not start"));
        assert_eq!(serde_json::to_value(&d).unwrap(), "2");
        let back: Dur<Sec> = serde_json::from_value("2".into()).unwrap();
        assert_eq!(back, d);
        assert!(serde_json::from_value::<Dur<Sec>>(5.into()).is_err());
    }

    #[test]
    fn sizes_and_cpu_lists_take_the_forms_a_scenario_writes() {
        let s: Size = serde_json::from_value(4096.into()).unwrap();
        assert_eq!((s.text(), s.get()), ("4096", Some(4096)));
        assert_eq!(Size::new("1K").bytes("--b").unwrap(), 1024);
        assert!(serde_json::from_value::<Size>((-4).into()).is_err());
        let c: Cpus = serde_json::from_value(serde_json::json!([0, 2])).unwrap();
        assert_eq!(c.text(), "0,2");
        assert_eq!(c.list("--cpus").unwrap().cpus(), [0, 2]);
        assert_eq!(serde_json::to_value(&c).unwrap(), "0,2");
        assert!(Cpus::new("all").is_all());
        assert!(Cpus::new("x").list("--cpus").is_err());
    }
}
