//! Architecture checks read from the source text of `src/`: a file-level import graph checked for
//! cycles, for the one-way order of the stages (docs/development.md, "Layout of the source"), and for file length.
//!
//! An edge A -> B means file A names an item defined in file B: through `use crate::`/`super::`/
//! `self::`/child-module paths, inline `crate::a::b` paths in code, or aliases those uses bring in
//! (`use crate::sources; sources::text::X`). `pub use` (and plain `use`) re-exports are followed to
//! the file that really defines the name. `mod foo;` is not an edge; `#[cfg(test)]` items are
//! skipped. `main.rs` names the library as `cidscope::`, read like `crate::`.
//!
//! Another tree (another worktree) is checked with
//! `CIDSCOPE_ARCH_SRC=/work/wt/x/src cargo test --test architecture -- --nocapture`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What a stage may import besides itself.
#[derive(Clone, Copy)]
enum Allow {
    Only(&'static [&'static str]),
    AllExcept(&'static [&'static str]),
    Any,
}

/// The stages and what each may import. A file's stage is its first path component under `src/`
/// (`events/store.rs` -> `events`; top-level `cli.rs` -> `cli`, like a future `cli/` folder).
const LAYERS: &[(&str, Allow)] = &[
    ("events", Allow::Only(&[])),
    ("sources", Allow::Only(&["events"])),
    ("model", Allow::Only(&["events"])),
    ("timeline", Allow::Only(&["events", "model"])),
    (
        "sim",
        Allow::Only(&["events", "model", "timeline", "sources", "export"]),
    ),
    (
        "stats",
        Allow::Only(&["events", "model", "timeline", "sources"]),
    ),
    (
        "export",
        Allow::Only(&["events", "model", "timeline", "sources"]),
    ),
    (
        "demo",
        Allow::Only(&["events", "model", "timeline", "sources", "sim"]),
    ),
    (
        "vm",
        Allow::Only(&[
            "events", "model", "timeline", "sources", "sim", "stats", "export",
        ]),
    ),
    ("ui", Allow::AllExcept(&["cli", "live_cli", "main"])),
    ("cli", Allow::Any),
    ("live_cli", Allow::Any),
    ("main", Allow::Any),
    ("lib", Allow::Any),
    ("testing", Allow::Any),
];

/// Longest a file may be before its test module.
const MAX_LINES: usize = 700;

// ---------------------------------------------------------------------------------------------
// Lexing

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Pushes `s` with everything but newlines blanked, so line numbers still hold.
fn blank(out: &mut String, s: &[char]) {
    out.extend(s.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
}

/// End (exclusive) of a "..." string whose contents start at `j`.
fn string_end(c: &[char], mut j: usize) -> usize {
    while j < c.len() {
        match c[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    c.len()
}

/// The source with comments (nested block comments too), strings (raw ones too) and char literals
/// blanked. Lifetimes and labels (`'a`) stay.
fn strip(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '/' && next == Some('/') {
            let end = c[i..]
                .iter()
                .position(|&x| x == '\n')
                .map_or(c.len(), |p| i + p);
            blank(&mut out, &c[i..end]);
            i = end;
        } else if ch == '/' && next == Some('*') {
            let (mut depth, mut j) = (0usize, i);
            while j < c.len() {
                if c[j] == '/' && c.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if c[j] == '*' && c.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            let j = j.min(c.len());
            blank(&mut out, &c[i..j]);
            i = j;
        } else if ch == '"' {
            let j = string_end(&c, i + 1).min(c.len());
            blank(&mut out, &c[i..j]);
            i = j;
        } else if ch == '\'' {
            if next == Some('\\') {
                // '\n', '\'', '\u{..}': the escaped char, then up to the closing quote
                let mut j = i + 3;
                while j < c.len() && c[j] != '\'' && c[j] != '\n' {
                    j += 1;
                }
                let j = (j + 1).min(c.len());
                blank(&mut out, &c[i..j]);
                i = j;
            } else if c.get(i + 2) == Some(&'\'') {
                blank(&mut out, &c[i..i + 3]);
                i += 3;
            } else {
                out.push('\''); // a lifetime or label
                i += 1;
            }
        } else if is_ident(ch) {
            let start = i;
            while i < c.len() && is_ident(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            if matches!(word.as_str(), "r" | "br" | "cr") {
                let hashes = c[i..].iter().take_while(|&&x| x == '#').count();
                if c.get(i + hashes) == Some(&'"') {
                    let mut j = i + hashes + 1;
                    let end = loop {
                        if j >= c.len() {
                            break c.len();
                        }
                        if c[j] == '"'
                            && c[j + 1..]
                                .iter()
                                .take(hashes)
                                .filter(|&&x| x == '#')
                                .count()
                                == hashes
                        {
                            break j + 1 + hashes;
                        }
                        j += 1;
                    };
                    blank(&mut out, &c[start..end]);
                    i = end;
                    continue;
                }
            }
            out.push_str(&word);
        } else {
            out.push(ch);
            i += 1;
        }
    }
    out
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    P(char),
}

#[derive(Clone, Debug)]
struct Token {
    t: Tok,
    line: usize,
}

fn tokenize(code: &str) -> Vec<Token> {
    let mut toks = Vec::new();
    for (n, l) in code.lines().enumerate() {
        let c: Vec<char> = l.chars().collect();
        let mut i = 0;
        while i < c.len() {
            let line = n + 1;
            if c[i].is_whitespace() {
                i += 1;
            } else if is_ident(c[i]) {
                let s = i;
                while i < c.len() && is_ident(c[i]) {
                    i += 1;
                }
                toks.push(Token {
                    t: Tok::Ident(c[s..i].iter().collect()),
                    line,
                });
            } else if c[i] == ':' && c.get(i + 1) == Some(&':') {
                toks.push(Token { t: Tok::Sep, line });
                i += 2;
            } else {
                toks.push(Token {
                    t: Tok::P(c[i]),
                    line,
                });
                i += 1;
            }
        }
    }
    toks
}

fn is_p(t: Option<&Token>, p: char) -> bool {
    matches!(t, Some(Token { t: Tok::P(x), .. }) if *x == p)
}

fn ident(t: Option<&Token>) -> Option<&str> {
    match t {
        Some(Token {
            t: Tok::Ident(s), ..
        }) => Some(s),
        _ => None,
    }
}

/// Index after the bracket group opening at `i` (`open`/`close` balanced).
fn skip_group(t: &[Token], i: usize, open: char, close: char) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < t.len() {
        if is_p(t.get(j), open) {
            depth += 1;
        } else if is_p(t.get(j), close) {
            depth -= 1;
            if depth == 0 {
                return j + 1;
            }
        }
        j += 1;
    }
    t.len()
}

fn is_cfg_test(t: &[Token], i: usize) -> bool {
    is_p(t.get(i), '#')
        && is_p(t.get(i + 1), '[')
        && ident(t.get(i + 2)) == Some("cfg")
        && is_p(t.get(i + 3), '(')
        && ident(t.get(i + 4)) == Some("test")
        && is_p(t.get(i + 5), ')')
        && is_p(t.get(i + 6), ']')
}

/// The tokens without `#[cfg(test)]` items (test modules, test-only uses and helpers).
fn drop_test_items(t: Vec<Token>) -> Vec<Token> {
    let mut out = Vec::with_capacity(t.len());
    let mut i = 0;
    while i < t.len() {
        if is_p(t.get(i), '#') && is_p(t.get(i + 1), '!') && is_cfg_test(&t, i + 1) {
            return Vec::new(); // #![cfg(test)]: the whole file
        }
        if !is_cfg_test(&t, i) {
            out.push(t[i].clone());
            i += 1;
            continue;
        }
        let mut j = i + 7;
        while is_p(t.get(j), '#') && is_p(t.get(j + 1), '[') {
            j = skip_group(&t, j + 1, '[', ']');
        }
        // the item: up to a `;` or through the first `{ .. }` outside parentheses
        let mut paren = 0i32;
        while j < t.len() {
            match &t[j].t {
                Tok::P('(') | Tok::P('[') => paren += 1,
                Tok::P(')') | Tok::P(']') => paren -= 1,
                Tok::P(';') if paren == 0 => {
                    j += 1;
                    break;
                }
                Tok::P('{') if paren == 0 => {
                    j = skip_group(&t, j, '{', '}');
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        i = j;
    }
    out
}

/// Lines before the test module: the first `#[cfg(test)]` line followed (past other attributes)
/// by a `mod` line; the whole file if there is none.
fn lines_before_tests(code: &str) -> usize {
    let lines: Vec<&str> = code.lines().collect();
    let is_mod = |l: &str| {
        let l = l.trim_start();
        let l = l.strip_prefix("pub").map_or(l, |r| {
            let r = r.trim_start();
            if r.starts_with('(') {
                r.split_once(')').map_or(r, |(_, x)| x)
            } else {
                r
            }
        });
        l.trim_start().starts_with("mod ")
    };
    for (n, l) in lines.iter().enumerate() {
        let t = l.trim();
        let Some(rest) = t.strip_prefix("#[cfg(test)]") else {
            continue;
        };
        if !rest.trim().is_empty() {
            if is_mod(rest) {
                return n;
            }
            continue;
        }
        let next = lines[n + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty() && !l.starts_with("#["));
        if next.is_some_and(is_mod) {
            return n;
        }
    }
    lines.len()
}

// ---------------------------------------------------------------------------------------------
// Parsing

struct UseItem {
    /// As written (`crate`, `super`, `self`, an alias, a child module, or an external crate first).
    path: Vec<String>,
    /// The name it brings into scope (`as` rename applied); None for a glob.
    local: Option<String>,
    line: usize,
    /// Index into `SrcFile::scopes`: the module the `use` is in (inline modules count).
    scope: usize,
}

struct SrcFile {
    /// Path relative to `src/`, with `/`.
    rel: String,
    lines: usize,
    toks: Vec<Token>,
    /// Module path in effect at each token.
    scope_of: Vec<usize>,
    scopes: Vec<Vec<String>>,
    uses: Vec<UseItem>,
    /// Token ranges of `use` declarations (not read again as code paths).
    use_ranges: Vec<(usize, usize)>,
    /// Names of items defined here (fn, struct, enum, trait, type, const, static, union, inline mod,
    /// macro_rules!).
    defines: HashSet<String>,
    /// Local name -> index into `uses`.
    aliases: HashMap<String, usize>,
}

fn parse_use_tree(
    t: &[Token],
    k: &mut usize,
    mut path: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>)>,
) {
    loop {
        match t.get(*k).map(|x| &x.t) {
            Some(Tok::P('{')) => {
                *k += 1;
                loop {
                    if is_p(t.get(*k), '}') {
                        *k += 1;
                        return;
                    }
                    parse_use_tree(t, k, path.clone(), out);
                    if is_p(t.get(*k), ',') {
                        *k += 1;
                    } else {
                        if is_p(t.get(*k), '}') {
                            *k += 1;
                        }
                        return; // the end of the group, or malformed (the caller skips to `;`)
                    }
                }
            }
            Some(Tok::P('*')) => {
                *k += 1;
                out.push((path, None));
                return;
            }
            Some(Tok::Sep) => {
                if path.is_empty() {
                    path.push("::".into()); // `use ::name`: an external crate
                }
                *k += 1;
            }
            Some(Tok::Ident(s)) => {
                path.push(s.clone());
                *k += 1;
                if matches!(t.get(*k).map(|x| &x.t), Some(Tok::Sep)) {
                    *k += 1;
                    continue;
                }
                if path.last().map(String::as_str) == Some("self") && path.len() > 1 {
                    path.pop();
                }
                let mut local = path.last().cloned();
                if ident(t.get(*k)) == Some("as") {
                    local = ident(t.get(*k + 1)).map(str::to_string);
                    *k += 2;
                }
                out.push((path, local));
                return;
            }
            _ => return,
        }
    }
}

const DEF_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
];

fn parse_file(rel: String, module: Vec<String>, text: &str) -> SrcFile {
    let code = strip(text);
    let lines = lines_before_tests(&code);
    let toks = drop_test_items(tokenize(&code));

    // module scopes (inline `mod x { .. }` blocks)
    let mut scopes = vec![module.clone()];
    let mut scope_of = Vec::with_capacity(toks.len());
    let mut stack: Vec<(usize, usize)> = Vec::new(); // (scope index, brace depth inside it)
    let mut depth = 0usize;
    let mut pending: Option<String> = None;
    for (i, tk) in toks.iter().enumerate() {
        let cur = stack.last().map_or(0, |s| s.0);
        scope_of.push(cur);
        match &tk.t {
            Tok::Ident(s) if s == "mod" => {
                if let (Some(name), true) = (ident(toks.get(i + 1)), is_p(toks.get(i + 2), '{')) {
                    pending = Some(name.to_string());
                }
            }
            Tok::P('{') => {
                depth += 1;
                if let Some(name) = pending.take() {
                    let mut m = scopes[cur].clone();
                    m.push(name);
                    scopes.push(m);
                    stack.push((scopes.len() - 1, depth));
                }
            }
            Tok::P('}') => {
                if stack.last().is_some_and(|s| s.1 == depth) {
                    stack.pop();
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }

    let mut uses = Vec::new();
    let mut use_ranges = Vec::new();
    let mut defines = HashSet::new();
    let mut i = 0;
    while i < toks.len() {
        let word = ident(toks.get(i));
        if word == Some("use") {
            let mut k = i + 1;
            let mut items = Vec::new();
            parse_use_tree(&toks, &mut k, Vec::new(), &mut items);
            while k < toks.len() && !is_p(toks.get(k), ';') {
                k += 1;
            }
            for (path, local) in items {
                uses.push(UseItem {
                    path,
                    local,
                    line: toks[i].line,
                    scope: scope_of[i],
                });
            }
            use_ranges.push((i, k));
            i = k + 1;
            continue;
        }
        if let Some(w) = word {
            let prev_ok = i == 0 || !(is_p(toks.get(i - 1), '\'') || is_p(toks.get(i - 1), '*'));
            if DEF_KEYWORDS.contains(&w) && prev_ok {
                if let Some(name) = ident(toks.get(i + 1)) {
                    // `mod x;` declares a file module, which is resolved as a file
                    if !(w == "mod" && is_p(toks.get(i + 2), ';')) {
                        defines.insert(name.to_string());
                    }
                }
            } else if w == "macro_rules"
                && is_p(toks.get(i + 1), '!')
                && let Some(name) = ident(toks.get(i + 2))
            {
                defines.insert(name.to_string());
            }
        }
        i += 1;
    }
    let aliases = uses
        .iter()
        .enumerate()
        .filter_map(|(n, u)| u.local.clone().filter(|l| l != "_").map(|l| (l, n)))
        .collect();
    SrcFile {
        rel,
        lines,
        toks,
        scope_of,
        scopes,
        uses,
        use_ranges,
        defines,
        aliases,
    }
}

// ---------------------------------------------------------------------------------------------
// The graph

#[derive(Clone, Copy, Debug, PartialEq)]
enum Found {
    /// A module (its file): the path named no item.
    Module(usize),
    /// An item and the file that defines it; `false` when the name was not seen defined there.
    Item(usize, bool),
}

/// Where an edge was first seen: line in the importing file and the path as written.
#[derive(Clone, Debug)]
struct Via {
    line: usize,
    path: String,
}

struct Tree {
    files: Vec<SrcFile>,
    modules: HashMap<Vec<String>, usize>,
    /// Per file: local name -> absolute path (None: an external crate's) for its named uses.
    imports: Vec<HashMap<String, Option<Vec<String>>>>,
    /// Per file: absolute module paths of its glob uses.
    globs: Vec<Vec<Vec<String>>>,
    edges: BTreeMap<(usize, usize), Via>,
}

fn collect_rs(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, root, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            let rel = p.strip_prefix(root).unwrap_or(&p);
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            out.push((rel, p));
        }
    }
}

/// Module path of a file under src/, None for a binary crate root (main.rs, bin/).
fn module_of(rel: &str) -> Option<Vec<String>> {
    if rel == "main.rs" || rel.starts_with("bin/") {
        return None;
    }
    if rel == "lib.rs" {
        return Some(Vec::new());
    }
    let mut m: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(str::to_string)
        .collect();
    if m.last().map(String::as_str) == Some("mod") {
        m.pop();
    }
    Some(m)
}

impl Tree {
    fn load(src: &Path) -> Tree {
        let mut paths = Vec::new();
        collect_rs(src, src, &mut paths);
        paths.sort();
        let mut files = Vec::new();
        let mut modules = HashMap::new();
        for (rel, p) in paths {
            let text = std::fs::read_to_string(&p)
                .unwrap_or_else(|e| panic!("reading {}: {e}", p.display()));
            let module = module_of(&rel);
            if let Some(m) = &module {
                modules.insert(m.clone(), files.len());
            }
            files.push(parse_file(rel, module.unwrap_or_default(), &text));
        }
        let mut tree = Tree {
            files,
            modules,
            imports: Vec::new(),
            globs: Vec::new(),
            edges: BTreeMap::new(),
        };
        for f in 0..tree.files.len() {
            let (mut named, mut globs) = (HashMap::new(), Vec::new());
            for u in &tree.files[f].uses {
                let abs = tree.absolutize(f, &u.path, u.scope, 0);
                match &u.local {
                    Some(l) => {
                        named.insert(l.clone(), abs);
                    }
                    None => globs.extend(abs),
                }
            }
            tree.imports.push(named);
            tree.globs.push(globs);
        }
        tree.build_edges();
        tree
    }

    /// The crate-absolute path (segments after `crate`) of `path` as written in file `f` in module
    /// scope `scope`; None when it leads outside the crate.
    fn absolutize(
        &self,
        f: usize,
        path: &[String],
        scope: usize,
        depth: u8,
    ) -> Option<Vec<String>> {
        let file = &self.files[f];
        let scope = &file.scopes[scope];
        let first = path.first()?;
        let mut base: Vec<String>;
        let mut idx = 1;
        match first.as_str() {
            "crate" | "cidscope" => base = Vec::new(),
            "self" => base = scope.clone(),
            "super" => {
                base = scope.clone();
                idx = 0;
                while path.get(idx).map(String::as_str) == Some("super") {
                    base.pop()?;
                    idx += 1;
                }
            }
            "::" => return None,
            _ => {
                // a child module first: in `use replay::{replay}` it names the module `replay`
                let mut child = scope.clone();
                child.push(first.clone());
                if !self.modules.contains_key(&child) {
                    let u = &file.uses[*file.aliases.get(first)?];
                    if depth > 8 {
                        return None;
                    }
                    let mut p = self.absolutize(f, &u.path, u.scope, depth + 1)?;
                    p.extend_from_slice(&path[1..]);
                    return Some(p);
                }
                base = child;
            }
        }
        base.extend_from_slice(&path[idx..]);
        Some(base)
    }

    /// The deepest module file that `abs` starts with, and how many segments it took.
    fn locate(&self, abs: &[String]) -> Option<(usize, usize)> {
        (0..=abs.len())
            .rev()
            .find_map(|k| self.modules.get(&abs[..k]).map(|&f| (f, k)))
    }

    /// Where the item `abs` is really defined (re-exports followed).
    fn find(&self, abs: &[String], depth: u8) -> Option<Found> {
        let (f, k) = self.locate(abs)?;
        let rest = &abs[k..];
        if rest.is_empty() {
            // a module, unless its parent also has a value of that name (`replay` the fn and the mod)
            if let Some((name, parent)) = abs.split_last()
                && let Some((pf, pk)) = self.locate(parent)
                && pk == parent.len()
            {
                if self.files[pf].defines.contains(name) {
                    return Some(Found::Item(pf, true));
                }
                if let Some(Some(target)) = self.imports[pf].get(name)
                    && target.as_slice() != abs
                    && depth < 16
                {
                    return self.find(target, depth + 1);
                }
            }
            return Some(Found::Module(f));
        }
        let name = &rest[0];
        if self.files[f].defines.contains(name) || depth > 16 {
            return Some(Found::Item(f, true));
        }
        if let Some(target) = self.imports[f].get(name) {
            let Some(target) = target else {
                return Some(Found::Item(f, true));
            }; // external
            let mut p = target.clone();
            p.extend_from_slice(&rest[1..]);
            return self.find(&p, depth + 1).or(Some(Found::Item(f, false)));
        }
        for g in &self.globs[f] {
            let mut p = g.clone();
            p.extend_from_slice(rest);
            if let Some(found @ Found::Item(_, true)) = self.find(&p, depth + 1) {
                return Some(found);
            }
        }
        Some(Found::Item(f, false))
    }

    fn add_edge(&mut self, from: usize, to: usize, line: usize, path: &[String]) {
        if from != to {
            self.edges.entry((from, to)).or_insert_with(|| Via {
                line,
                path: path.join("::"),
            });
        }
    }

    fn build_edges(&mut self) {
        for f in 0..self.files.len() {
            let mut found = Vec::new();
            for u in &self.files[f].uses {
                let Some(abs) = self.absolutize(f, &u.path, u.scope, 0) else {
                    continue;
                };
                match (self.find(&abs, 0), &u.local) {
                    (Some(Found::Item(t, _)), _) | (Some(Found::Module(t)), None) => {
                        found.push((t, u.line, u.path.clone()))
                    }
                    _ => {}
                }
            }
            // inline paths in code: `crate::a::B`, `super::x`, `alias::y`, `child::z`
            let file = &self.files[f];
            let t = &file.toks;
            let mut r = 0;
            let mut i = 0;
            while i < t.len() {
                while r < file.use_ranges.len() && file.use_ranges[r].1 < i {
                    r += 1;
                }
                if r < file.use_ranges.len() && file.use_ranges[r].0 <= i {
                    i = file.use_ranges[r].1 + 1;
                    continue;
                }
                let starts = ident(t.get(i)).is_some()
                    && matches!(t.get(i + 1).map(|x| &x.t), Some(Tok::Sep))
                    && ident(t.get(i + 2)).is_some()
                    && !(i > 0 && matches!(t[i - 1].t, Tok::Sep));
                if !starts {
                    i += 1;
                    continue;
                }
                let mut path = vec![ident(t.get(i)).unwrap_or_default().to_string()];
                let mut j = i + 1;
                while matches!(t.get(j).map(|x| &x.t), Some(Tok::Sep)) {
                    let Some(seg) = ident(t.get(j + 1)) else {
                        break;
                    };
                    path.push(seg.to_string());
                    j += 2;
                }
                if let Some(abs) = self.absolutize(f, &path, file.scope_of[i], 0)
                    && let Some(Found::Item(to, _)) = self.find(&abs, 0)
                {
                    found.push((to, t[i].line, path));
                }
                i = j;
            }
            for (to, line, path) in found {
                self.add_edge(f, to, line, &path);
            }
        }
    }

    fn stage(&self, f: usize) -> &str {
        let rel = &self.files[f].rel;
        match rel.split_once('/') {
            Some((dir, _)) => dir,
            None => rel.trim_end_matches(".rs"),
        }
    }

    fn loc(&self, f: usize, line: usize) -> String {
        format!("{}:{line}", self.files[f].rel)
    }
}

// ---------------------------------------------------------------------------------------------
// The checks (each returns one line per violation)

/// Strongly connected components of more than one file, each with one cycle through it.
fn cycles(tree: &Tree) -> Vec<String> {
    let n = tree.files.len();
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in tree.edges.keys() {
        adj[a].push(b);
    }
    // Tarjan, iterative
    let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
    let (mut next, mut stack, mut sccs) = (0, Vec::new(), Vec::new());
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut work = vec![(root, 0usize)];
        while let Some(&mut (v, ref mut e)) = work.last_mut() {
            if *e == 0 && index[v] == usize::MAX {
                index[v] = next;
                low[v] = next;
                next += 1;
                stack.push(v);
                on[v] = true;
            }
            if let Some(&w) = adj[v].get(*e) {
                *e += 1;
                if index[w] == usize::MAX {
                    work.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                low[u] = low[u].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                while let Some(w) = stack.pop() {
                    on[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    sccs.push(comp);
                }
            }
        }
    }
    sccs.sort_by_key(|c| std::cmp::Reverse(c.len()));
    sccs.iter()
        .map(|comp| {
            let set: BTreeSet<usize> = comp.iter().copied().collect();
            let names: Vec<&str> = comp.iter().map(|&f| tree.files[f].rel.as_str()).collect();
            // shortest cycle through the first file, by BFS inside the component
            let s = comp[0];
            let mut prev: HashMap<usize, usize> = HashMap::new();
            let mut q = VecDeque::from([s]);
            let mut last = None;
            'bfs: while let Some(v) = q.pop_front() {
                for &w in &adj[v] {
                    if !set.contains(&w) {
                        continue;
                    }
                    if w == s {
                        last = Some(v);
                        break 'bfs;
                    }
                    if let std::collections::hash_map::Entry::Vacant(e) = prev.entry(w) {
                        e.insert(v);
                        q.push_back(w);
                    }
                }
            }
            let mut path = vec![s];
            let mut v = last.unwrap_or(s);
            while v != s {
                path.push(v);
                v = prev[&v];
            }
            path[1..].reverse();
            let mut ex = String::new();
            for (k, &a) in path.iter().enumerate() {
                let b = path.get(k + 1).copied().unwrap_or(s);
                let via = &tree.edges[&(a, b)];
                let _ = write!(ex, "{} ({}) -> ", tree.loc(a, via.line), via.path);
            }
            ex.push_str(&tree.files[s].rel);
            format!(
                "cycle of {} files: {}\n    e.g. {ex}",
                comp.len(),
                names.join(", ")
            )
        })
        .collect()
}

fn layer_violations(tree: &Tree) -> Vec<String> {
    let table: HashMap<&str, Allow> = LAYERS.iter().copied().collect();
    let mut out = Vec::new();
    for f in 0..tree.files.len() {
        if !table.contains_key(tree.stage(f)) {
            out.push(format!(
                "{}: stage `{}` is not in LAYERS",
                tree.files[f].rel,
                tree.stage(f)
            ));
        }
    }
    for (&(a, b), via) in &tree.edges {
        let (sa, sb) = (tree.stage(a), tree.stage(b));
        let ok = sa == sb
            || match table.get(sa) {
                Some(Allow::Only(l)) => l.contains(&sb),
                Some(Allow::AllExcept(l)) => !l.contains(&sb),
                Some(Allow::Any) => true,
                None => true, // reported above
            };
        if !ok {
            out.push(format!(
                "{} -> {}: {sa} may not import {sb} ({})",
                tree.loc(a, via.line),
                tree.files[b].rel,
                via.path
            ));
        }
    }
    out
}

fn long_files(tree: &Tree) -> Vec<String> {
    let mut long: Vec<&SrcFile> = tree.files.iter().filter(|f| f.lines > MAX_LINES).collect();
    long.sort_by_key(|f| std::cmp::Reverse(f.lines));
    long.iter()
        .map(|f| {
            format!(
                "{}: {} lines before its tests (max {MAX_LINES})",
                f.rel, f.lines
            )
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The checks on the crate

fn src_dir() -> PathBuf {
    std::env::var_os("CIDSCOPE_ARCH_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

fn crate_tree() -> &'static Tree {
    static TREE: std::sync::OnceLock<Tree> = std::sync::OnceLock::new();
    TREE.get_or_init(|| {
        let src = src_dir();
        let tree = Tree::load(&src);
        assert!(
            tree.files.iter().any(|f| f.rel == "lib.rs"),
            "no lib.rs under {} (CIDSCOPE_ARCH_SRC must name a crate's src/)",
            src.display()
        );
        println!(
            "architecture of {}: {} files, {} edges; cycles: {}, layer violations: {}, files over {MAX_LINES} lines: {}",
            src.display(),
            tree.files.len(),
            tree.edges.len(),
            cycles(&tree).len(),
            layer_violations(&tree).len(),
            long_files(&tree).len()
        );
        tree
    })
}

fn assert_none(what: &str, v: Vec<String>) {
    assert!(v.is_empty(), "{} {what}:\n{}", v.len(), v.join("\n"));
}

#[test]
fn no_import_cycles() {
    assert_none("import cycles between files", cycles(crate_tree()));
}

#[test]
fn layers() {
    assert_none(
        "imports against the stage order (LAYERS)",
        layer_violations(crate_tree()),
    );
}

#[test]
fn file_length() {
    assert_none("files too long", long_files(crate_tree()));
}

// ---------------------------------------------------------------------------------------------
// The checker on small synthetic trees, so it cannot pass by seeing nothing

fn synthetic(name: &str, files: &[(&str, &str)]) -> Tree {
    let dir = std::env::temp_dir().join(format!("cidscope-arch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (rel, text) in files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().expect("invariant: a joined path has a parent"))
            .expect("temp dir");
        std::fs::write(&p, text).expect("temp file");
    }
    let tree = Tree::load(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    tree
}

fn edge_list(tree: &Tree) -> Vec<String> {
    tree.edges
        .keys()
        .map(|&(a, b)| format!("{} -> {}", tree.files[a].rel, tree.files[b].rel))
        .collect()
}

#[test]
fn checker_finds_a_cycle() {
    let tree = synthetic(
        "cycle",
        &[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("a.rs", "use crate::b::B;\npub struct A;"),
            (
                "b.rs",
                "pub struct B;\npub fn f() -> super::c::C { todo!() }",
            ),
            ("c.rs", "pub struct C;\nfn g(_: crate::a::A) {}"),
        ],
    );
    let c = cycles(&tree);
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(
        c[0].starts_with("cycle of 3 files: a.rs, b.rs, c.rs"),
        "{}",
        c[0]
    );
    assert!(
        c[0].contains(
            "a.rs:1 (crate::b::B) -> b.rs:2 (super::c::C) -> c.rs:2 (crate::a::A) -> a.rs"
        ),
        "{}",
        c[0]
    );

    let acyclic = synthetic(
        "nocycle",
        &[
            ("lib.rs", "mod a; mod b;"),
            ("a.rs", "use crate::b::B;\npub struct A;"),
            ("b.rs", "pub struct B;"),
        ],
    );
    assert_eq!(edge_list(&acyclic), ["a.rs -> b.rs"]);
    assert!(cycles(&acyclic).is_empty());
}

#[test]
fn checker_follows_reexports() {
    let tree = synthetic(
        "reexport",
        &[
            ("lib.rs", "pub mod events; pub mod model;"),
            (
                "events/mod.rs",
                "mod store; mod trace; mod deep;\npub use store::EventStore;\npub use self::trace::{Format as Fmt, *};\npub use deep::Chain;",
            ),
            ("events/store.rs", "pub struct EventStore;"),
            (
                "events/trace.rs",
                "pub struct Trace;\npub enum Format { A }",
            ),
            ("events/deep.rs", "mod inner;\npub use inner::Chain;"),
            (
                "events/deep/inner.rs",
                "pub(crate) use super::super::store::EventStore as Chain;",
            ),
            ("model/mod.rs", "pub mod a;"),
            (
                "model/a.rs",
                "use crate::events::{EventStore, Fmt};\nfn f(_: crate::events::Trace) {}\nfn g(_: crate::events::Chain) {}",
            ),
        ],
    );
    let e = edge_list(&tree);
    assert!(
        e.contains(&"model/a.rs -> events/store.rs".to_string()),
        "{e:?}"
    );
    assert!(
        e.contains(&"model/a.rs -> events/trace.rs".to_string()),
        "{e:?}"
    ); // `as` rename and glob
    assert!(
        !e.iter()
            .any(|x| x.starts_with("model/a.rs -> events/mod.rs")),
        "{e:?}"
    );
    assert!(
        !e.iter().any(|x| x.starts_with("model/a.rs -> events/deep")),
        "{e:?}"
    ); // chain followed
    assert!(
        !e.iter().any(|x| x.contains("lib.rs")),
        "`mod x;` is no edge: {e:?}"
    );
}

#[test]
fn checker_finds_layer_violations() {
    let tree = synthetic(
        "layers",
        &[
            (
                "lib.rs",
                "pub mod events; pub mod sources; pub mod ui; pub mod widgets;",
            ),
            (
                "events/mod.rs",
                "pub struct Trace;\nfn f() { let _ = crate::ui::Theme; }",
            ),
            ("sources/mod.rs", "use crate::events::Trace;"),
            (
                "ui/mod.rs",
                "pub struct Theme;\nuse crate::sources;\nfn g() { sources::Reader; }",
            ),
            ("widgets/mod.rs", ""),
        ],
    );
    let v = layer_violations(&tree);
    assert_eq!(
        v,
        [
            "widgets/mod.rs: stage `widgets` is not in LAYERS",
            "events/mod.rs:2 -> ui/mod.rs: events may not import ui (crate::ui::Theme)",
        ],
        "{:?}",
        edge_list(&tree)
    );
    assert!(edge_list(&tree).contains(&"ui/mod.rs -> sources/mod.rs".to_string())); // through the alias
}

#[test]
fn checker_skips_comments_strings_and_tests() {
    let tree = synthetic(
        "lexer",
        &[
            ("lib.rs", "mod a; mod b; mod c;"),
            ("b.rs", "pub struct B; pub struct D; pub struct E;"),
            ("c.rs", "pub struct C;"),
            (
                "a.rs",
                concat!(
                    "/* outer /* nested */ crate::c::C still a comment */\n",
                    "// crate::c::C\n",
                    "const S: &str = r#\"crate::c::C \" still raw\"#;\n",
                    "const T: &str = \"crate::c::C \\\" still a string\";\n",
                    "const Q: char = '\"'; fn l<'a>(x: &'a str) -> &'a str { x }\n",
                    "const E: char = '\\''; use crate::b::{B as Bee, self as bb};\n",
                    "fn f() -> crate::b::D { let _ = bb::E; todo!() }\n",
                    "#[cfg(test)]\n",
                    "mod tests {\n    use crate::c::C;\n    fn t() { let _ = '{'; }\n}\n",
                ),
            ),
        ],
    );
    assert_eq!(edge_list(&tree), ["a.rs -> b.rs"]);
    let a = tree.files.iter().find(|f| f.rel == "a.rs").expect("a.rs");
    assert_eq!(a.lines, 7);
    assert!(tree.edges.values().all(|v| v.line == 6 || v.line == 7));
}

#[test]
fn checker_finds_long_files() {
    let body = "fn f() {}\n".repeat(MAX_LINES);
    let long = format!("{body}fn g() {{}}\n#[cfg(test)]\nmod tests {{\n{body}}}\n");
    let tree = synthetic(
        "length",
        &[
            ("lib.rs", "mod ok; mod long;"),
            (
                "ok.rs",
                &format!("{body}#[cfg(test)]\nmod tests {{\n{body}}}\n"),
            ),
            ("long.rs", &long),
        ],
    );
    assert_eq!(
        long_files(&tree),
        [format!(
            "long.rs: {} lines before its tests (max {MAX_LINES})",
            MAX_LINES + 1
        )]
    );
}
