import Link from "next/link";
import { signUpAction } from "../_auth/actions";
import { PasswordForm } from "../_auth/password-form";

export const dynamic = "force-dynamic";

export default function SignUpPage() {
  return (
    <section className="card" style={{ maxWidth: 420 }}>
      <h1>Create an account</h1>
      <PasswordForm action={signUpAction} submitLabel="Sign up" newPassword />
      <p className="muted">At least 10 characters; a passphrase is best.</p>
      <p className="muted">
        Already have an account? <Link href="/signin">Sign in</Link>
      </p>
    </section>
  );
}
