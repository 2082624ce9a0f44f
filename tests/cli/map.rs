//! The code map is enforced: which module of `src/` may import which, as
//! ARCHITECTURE.md's "Who may import whom" says. Every `crate::` path of the
//! product code (not its tests) is read, and an edge the rules do not allow
//! fails, with the file and line that made it. Modelled on rust-analyzer's
//! tidy tests: the rules are data here, checked on the text of the sources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may import the modules of the layers
/// below its own, and no other, but for [`EXCEPTIONS`].
const LAYERS: &[&[&str]] = &[
    &["error", "units", "progress", "files"],
    &["limits"],
    &["record"],
    &["system", "trace", "loads"],
    &["step"],
    &["store"],
    &["scenario"],
    &["analysis"],
    &["format"],
    &["import", "tune", "monitor"],
    &["compat", "cli"],
    &["main"],
];

/// Edges against the layers that the map allows, each to one item (a path
/// prefix) and said why in ARCHITECTURE.md.
const EXCEPTIONS: &[(&str, &str)] = &[
    // A run records the parameters of the step that made it.
    ("record", "crate::step::Params"),
    // cli hands a personality its raw arguments; the personality writes its
    // files and output with cli's helpers, as a subcommand does.
    ("compat", "crate::cli::common"),
    ("cli", "crate::compat"),
];

/// An edge: module `from` names `path` at `file:line`.
#[derive(Debug)]
struct Edge {
    from: String,
    to: String,
    path: String,
    at: String,
}

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// Whether the rules allow `e`.
fn allowed(e: &Edge) -> bool {
    let exception = EXCEPTIONS
        .iter()
        .any(|(from, prefix)| *from == e.from && e.path.starts_with(prefix));
    match (layer(&e.from), layer(&e.to)) {
        (Some(a), Some(b)) => b < a || exception,
        _ => false,
    }
}

/// `text` with comments, strings and character literals blanked (newlines
/// kept), so that what is left is code.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && at(&c, i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '/' && at(&c, i + 1) == '*' {
            let mut depth = 0;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && at(&c, i + 1) == '*' {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && at(&c, i + 1) == '/' {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
        } else if c[i] == 'r' && (at(&c, i + 1) == '"' || at(&c, i + 1) == '#') && !ident(i, &c) {
            // A raw string: r"...", r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) != Some(&'"') {
                out.push(c[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let body: String = c[j + 1..].iter().collect();
            let end = body.find(&close).map_or(c.len(), |k| {
                j + 1 + body[..k].chars().count() + close.chars().count()
            });
            while i < end {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '"' {
            blank(&mut out, c[i]);
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    blank(&mut out, c[i]);
                    i += 1;
                }
                if i < c.len() {
                    blank(&mut out, c[i]);
                    i += 1;
                }
            }
            if i < c.len() {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else if c[i] == '\''
            && (at(&c, i + 2) == '\'' || (at(&c, i + 1) == '\\' && at(&c, i + 3) == '\''))
        {
            // A character literal ('{', '\n'), not a lifetime.
            let len = if at(&c, i + 1) == '\\' { 4 } else { 3 };
            for _ in 0..len {
                blank(&mut out, c[i]);
                i += 1;
            }
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

/// The character at `i`, or NUL past the end.
fn at(c: &[char], i: usize) -> char {
    c.get(i).copied().unwrap_or('\0')
}

/// Whether the character before `i` continues an identifier (the `r` of
/// `for"` is not a raw string's).
fn ident(i: usize, c: &[char]) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// The line index of the end of the item that starts on line `start` (its
/// braces balanced, or its `;`).
fn item_end(lines: &[&str], start: usize) -> usize {
    let mut depth = 0i32;
    let mut opened = false;
    for (n, line) in lines.iter().enumerate().skip(start) {
        for ch in line.chars() {
            match ch {
                '{' => {
                    depth += 1;
                    opened = true;
                }
                '}' => depth -= 1,
                ';' if !opened && depth == 0 => return n,
                _ => {}
            }
        }
        if opened && depth <= 0 {
            return n;
        }
    }
    lines.len() - 1
}

/// The module path of a source file (`src/cli/bench/mod.rs`: `cli::bench`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The product code of `file` (its `#[cfg(test)]` items blanked), and the
/// files its `#[cfg(test)] mod x;` lines make test code.
fn product_code(file: &Path) -> (Vec<String>, Vec<PathBuf>) {
    let original = std::fs::read_to_string(file).unwrap();
    let original: Vec<&str> = original.lines().collect();
    let mut lines: Vec<String> = code_only(&original.join("\n"))
        .lines()
        .map(str::to_string)
        .collect();
    let dir = match file.file_name().and_then(|n| n.to_str()) {
        Some("mod.rs" | "main.rs") => file.parent().unwrap().to_path_buf(),
        _ => file.with_extension(""),
    };
    let mut tests = Vec::new();
    let mut n = 0;
    while n < lines.len() {
        if lines[n].trim() != "#[cfg(test)]" {
            n += 1;
            continue;
        }
        let mut item = n + 1;
        let mut path = None;
        while item < lines.len() && lines[item].trim_start().starts_with("#[") {
            if let Some(p) = original[item].trim().strip_prefix("#[path = \"") {
                path = p.strip_suffix("\"]").map(str::to_string);
            }
            item += 1;
        }
        let decl = lines
            .get(item)
            .map(|l| l.trim().to_string())
            .unwrap_or_default();
        if let Some(name) = decl
            .trim_start_matches("pub ")
            .trim_start_matches("pub(crate) ")
            .strip_prefix("mod ")
            .and_then(|r| r.strip_suffix(';'))
        {
            tests.push(match &path {
                Some(p) => file.parent().unwrap().join(p),
                None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                None => dir.join(name).join("mod.rs"),
            });
        }
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let end = item_end(&refs, item);
        for l in lines.iter_mut().take(end + 1).skip(n) {
            l.clear();
        }
        n = end + 1;
    }
    (lines, tests)
}

/// The top-level modules named by `crate::` and escaping `super::` paths of
/// a line of the module `module`: (module, the path as `crate::...`).
fn references(module: &[String], line: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let words: Vec<(usize, &str)> = line
        .match_indices(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .fold((0, Vec::new()), |(start, mut v), (i, sep)| {
            v.push((start, &line[start..i]));
            (i + sep.len(), v)
        })
        .1;
    for (start, word) in words {
        let mut segs: Vec<&str> = word.split("::").collect();
        let tail_empty = segs.last() == Some(&"");
        if tail_empty {
            segs.pop();
        }
        let skip = match segs.first() {
            Some(&"crate") => 1,
            Some(&"super") => {
                let ups = segs.iter().take_while(|s| **s == "super").count();
                if ups < module.len() {
                    continue;
                }
                ups
            }
            _ => continue,
        };
        match segs.get(skip) {
            Some(t) => out.push((t.to_string(), format!("crate::{}", segs[skip..].join("::")))),
            None if tail_empty => group(&line[start + word.len()..], &mut out),
            None => {}
        }
    }
    out
}

/// The members of a `use crate::{a::b, c}` group that starts `rest`.
fn group(rest: &str, out: &mut Vec<(String, String)>) {
    let Some(members) = rest.strip_prefix('{') else {
        return;
    };
    for member in members.split('}').next().unwrap_or("").split(',') {
        let member = member.trim();
        let name = member.split("::").next().unwrap_or("").trim();
        if !name.is_empty() && name != "self" {
            out.push((name.to_string(), format!("crate::{member}")));
        }
    }
}

/// The product code of every file of `src/` (its tests left out), by file.
fn product_files(src: &Path) -> BTreeMap<PathBuf, Vec<String>> {
    let mut files = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut code = BTreeMap::new();
    let mut tests = Vec::new();
    for f in &files {
        let (lines, t) = product_code(f);
        tests.extend(t);
        code.insert(f.clone(), lines);
    }
    code.retain(|f, _| !tests.contains(f));
    code
}

/// Every edge between top-level modules in the product code of `src/`.
fn edges(src: &Path) -> Vec<Edge> {
    let code = product_files(src);
    let mut out = Vec::new();
    for (f, lines) in &code {
        let module = module_path(src, f);
        let from = module.first().map_or("main".to_string(), Clone::clone);
        for (n, line) in lines.iter().enumerate() {
            for (to, path) in references(&module, line) {
                if to != from {
                    out.push(Edge {
                        from: from.clone(),
                        to,
                        path,
                        at: format!("{}:{}", f.strip_prefix(src).unwrap().display(), n + 1),
                    });
                }
            }
        }
    }
    out
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn every_module_of_src_has_a_layer() {
    let mut missing = Vec::new();
    for e in std::fs::read_dir(src()).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_stem().unwrap().to_string_lossy().to_string();
        if layer(&name).is_none() {
            missing.push(name);
        }
    }
    assert!(
        missing.is_empty(),
        "modules without a place in the map (tests/cli/map.rs LAYERS and ARCHITECTURE.md): {missing:?}"
    );
}

#[test]
fn no_module_imports_one_the_map_forbids() {
    let all = edges(&src());
    assert!(
        all.iter().any(|e| e.from == "format" && e.to == "record"),
        "the edges are read"
    );
    let bad: Vec<String> = all
        .iter()
        .filter(|e| !allowed(e))
        .map(|e| format!("{}: {} -> {} ({})", e.at, e.from, e.to, e.path))
        .collect();
    assert!(
        bad.is_empty(),
        "edges the map (ARCHITECTURE.md, tests/cli/map.rs) forbids:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_store_speaks_to_a_database() {
    let src = src();
    let store = src.join("store");
    let mut bad = Vec::new();
    for (f, lines) in product_files(&src) {
        if f.starts_with(&store) {
            continue;
        }
        for (n, line) in lines.iter().enumerate() {
            let words = line.split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if words
                .into_iter()
                .any(|w| w == "rusqlite" || w == "postgres")
            {
                bad.push(format!(
                    "{}:{}",
                    f.strip_prefix(&src).unwrap().display(),
                    n + 1
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "a database client named outside src/store/ (its db/ is the one interface): {}",
        bad.join(", ")
    );
}

#[test]
fn the_reader_sees_code_not_comments_strings_or_tests() {
    let text = "use crate::a::B; // crate::c\nlet s = \"crate::d\";\nlet q = '{';\n\
                #[cfg(test)]\nmod tests {\n    use crate::e;\n}\nfn f() { crate::g::h() }\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.rs");
    std::fs::write(&file, text).unwrap();
    let (lines, _) = product_code(&file);
    let module = vec!["x".to_string()];
    let found: Vec<String> = lines
        .iter()
        .flat_map(|l| references(&module, l))
        .map(|(m, _)| m)
        .collect();
    assert_eq!(found, ["a", "g"]);
    let group = references(&module, "use crate::{b::C, d};");
    assert_eq!(
        group.iter().map(|(m, _)| m.as_str()).collect::<Vec<_>>(),
        ["b", "d"]
    );
    let up = references(&["x".to_string()], "use super::y::Z;");
    assert_eq!(up[0].0, "y", "super:: of a top-level module is the crate");
    assert!(references(&["x".to_string(), "w".to_string()], "use super::y;").is_empty());
}
