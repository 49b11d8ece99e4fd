/**
 * The 3-D Secure challenge as the customer sees it: one small page, plain HTML with no script,
 * that a screen reader and a Playwright test read by its heading and buttons alone.
 */
import { currencyOf, minorToDecimal } from "../shared/currency";

export const CHALLENGE_HEADING = "3D Secure test payment";

export interface ChallengeView {
  merchant: string;
  amount: number;
  currency: string;
  /** Open: the two buttons. Over: why, and the link back to the merchant. */
  state: { open: true } | { open: false; reason: string; returnLink: string };
}

export function challengePage(view: ChallengeView): string {
  const body = view.state.open
    ? `<p>${escapeHtml(view.merchant)} asks you to confirm a payment of <strong>${escapeHtml(amountText(view))}</strong>.</p>
<p>This is a test page: no bank is asked. Choose the outcome.</p>
<form method="post">
<button type="submit" name="action" value="complete">Complete authentication</button>
<button type="submit" name="action" value="fail">Fail authentication</button>
</form>`
    : `<p>Payment of <strong>${escapeHtml(amountText(view))}</strong> to ${escapeHtml(view.merchant)}.</p>
<p role="status">${escapeHtml(view.state.reason)}</p>
<p><a href="${escapeHtml(view.state.returnLink)}">Return to ${escapeHtml(view.merchant)}</a></p>`;
  return page(CHALLENGE_HEADING, body);
}

export function messagePage(title: string, message: string): string {
  return page(title, `<p role="alert">${escapeHtml(message)}</p>`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font:1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}button{font:inherit;padding:.5rem 1rem;margin:.25rem .5rem .25rem 0}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

/** "19.99 EUR"; a currency Stripe does not list (tests invent some) in minor units. */
function amountText(view: ChallengeView): string {
  const currency = currencyOf(view.currency);
  const code = view.currency.toUpperCase();
  return currency
    ? `${minorToDecimal(view.amount, currency.exponent)} ${code}`
    : `${view.amount} ${code} (minor units)`;
}

function escapeHtml(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}
