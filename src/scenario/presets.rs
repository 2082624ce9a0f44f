//! Scenarios built into the binary, one per field report rtlab is built from, plus
//! the quick check `rtlab run` makes with no arguments. `rtlab presets show NAME`
//! prints one so a user can copy and edit it.

/// A built-in scenario.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Its name (`rtlab run --preset NAME`).
    pub name: &'static str,
    /// The TOML text.
    pub text: &'static str,
}

/// Every preset.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "quick",
        text: include_str!("presets/quick.toml"),
    },
    Preset {
        name: "drone",
        text: include_str!("presets/drone.toml"),
    },
    Preset {
        name: "satellite",
        text: include_str!("presets/satellite.toml"),
    },
    Preset {
        name: "robot",
        text: include_str!("presets/robot.toml"),
    },
    Preset {
        name: "messaging",
        text: include_str!("presets/messaging.toml"),
    },
    Preset {
        name: "lab",
        text: include_str!("presets/lab.toml"),
    },
    Preset {
        name: "suite",
        text: include_str!("presets/suite.toml"),
    },
];

/// The preset called `name`.
pub fn get(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// The names, for error messages.
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The scenario of a load attribution of `mix` (`rtlab run --attribute MIX`):
/// latency under no load, under each part of the mix alone and the whole mix;
/// `None` when `mix` is not a load mix.
pub fn attribution(mix: &str) -> Option<String> {
    crate::loads::mix::MIXES.iter().any(|m| m.name == mix).then(|| {
        format!(
            "# Load attribution of {mix}: no load, each part alone, the whole mix.\n\
             name = \"attribution of {mix}\"\n\
             description = \"latency on every CPU under no load, each part of {mix} alone and the whole mix\"\n\
             [defaults]\nduration = \"20s\"\n\
             [[step]]\nname = \"latency\"\nprobe = \"latency\"\nload = \"{mix}\"\nattribute = true\n\
             [requirements]\ndeadline = \"1ms\"\n"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{expand, parse, DEFAULT_MAX_STEPS};

    #[test]
    fn every_preset_parses_validates_and_expands() {
        for p in PRESETS {
            let s = parse(&format!("preset {}", p.name), p.text).unwrap_or_else(|e| panic!("{e}"));
            let plan = expand(&s, Some("1s"), DEFAULT_MAX_STEPS).unwrap();
            assert!(!plan.is_empty(), "{}", p.name);
            assert!(
                s.description.is_some(),
                "{} says what it reproduces",
                p.name
            );
            for step in &plan {
                assert_eq!(
                    step.planned_ns,
                    Some(1_000_000_000),
                    "--duration scales {}",
                    step.name
                );
            }
        }
    }

    #[test]
    fn the_drone_preset_carries_the_sensor_deadlines() {
        let s = parse("drone", get("drone").unwrap().text).unwrap();
        assert_eq!(s.requirements["gyro"], 1_000_000);
        assert_eq!(s.requirements["baro"], 20_000_000);
        assert_eq!(s.requirements["gps"], 200_000_000);
    }
}
