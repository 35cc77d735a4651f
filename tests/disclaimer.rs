//! Seed 004's T11: an assistant bubble cannot be built without its disclaimer. Leaving the prop
//! out does not compile (the first file, with the compiler's own error kept beside it); with it,
//! the same code builds (the second), so the failure is the missing disclaimer and nothing else.

#[test]
fn an_assistant_bubble_without_its_disclaimer_does_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/bubble_without_disclaimer.rs");
    cases.pass("tests/compile_fail/bubble_with_disclaimer.rs");
}
