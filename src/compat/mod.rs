//! Personalities: rtlab run under the name and with the command line of a tool
//! it replaces, printing that tool's output, and storing every run like its own.

pub mod cyclictest;
