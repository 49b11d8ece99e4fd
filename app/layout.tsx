import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { SessionNav } from "./_auth/session-nav";
import { TrpcProvider } from "./_trpc/client";
import { CartLink } from "./cart/cart-link";
import "./globals.css";

export const metadata: Metadata = {
  title: "Idempotent Checkout",
  description: "A checkout that charges exactly once.",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TrpcProvider>
          <a href="#main" className="skip-link">
            Skip to content
          </a>
          <header className="site-header">
            <Link href="/" className="brand">
              Idempotent Checkout
            </Link>
            <nav aria-label="Main">
              <Link href="/">Shop</Link>
              <CartLink />
              <Link href="/checkout">Checkout</Link>
              <SessionNav />
            </nav>
          </header>
          <main id="main">{children}</main>
        </TrpcProvider>
      </body>
    </html>
  );
}
