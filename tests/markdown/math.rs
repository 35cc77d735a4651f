//! Formulas: every delimiter models use comes out as its LaTeX source, undamaged, in the
//! placeholder the page typesets; prose with dollar amounts stays prose.

use ponder::markdown::render;

#[test]
fn every_delimiter_keeps_its_latex_whole() {
    assert_eq!(
        render("so $x^2$ holds"),
        "<p>so <code class=\"math-inline\">x^2</code> holds</p>\n"
    );
    assert_eq!(
        render("\\[ \\int_0^1 x^2\\,dx \\]"),
        "<p><code class=\"math-display\"> \\int_0^1 x^2\\,dx </code></p>\n",
        "markdown's escapes do not eat the backslashes"
    );
    assert_eq!(
        render("by \\(a^2 + b^2 = c^2\\)."),
        "<p>by <code class=\"math-inline\">a^2 + b^2 = c^2</code>.</p>\n"
    );
    assert!(render("$$\\sum_{k=1}^{n} k$$")
        .contains("<code class=\"math-display\">\\sum_{k=1}^{n} k</code>"));
    let html = render("$a < b \\text{<b>x</b>} & c$");
    assert!(
        html.contains("a &lt; b \\text{&lt;b&gt;x&lt;/b&gt;} &amp; c"),
        "the source is escaped: {html}"
    );
}

#[test]
fn dollar_amounts_and_code_stay_what_they_are() {
    assert_eq!(
        render("It costs $5 and $10."),
        "<p>It costs $5 and $10.</p>\n"
    );
    let code = render("`$x$` and\n\n```\n$$y$$\n```\n");
    assert!(!code.contains("math-"), "{code}");
    assert_eq!(
        render("an escaped \\( alone"),
        "<p>an escaped ( alone</p>\n"
    );
}
