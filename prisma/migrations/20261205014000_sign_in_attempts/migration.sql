-- One row per (email, address group) with wrong passwords: how many in the window, and until when
-- the next try must wait. A sign-in reserves its attempt here in one statement before the password
-- is checked, so a parallel burst is counted as a sequence (decision 0146). Not money: no WAL.
CREATE UNLOGGED TABLE "sign_in_attempts" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL,
    "wait_until" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "sign_in_attempts_pkey" PRIMARY KEY ("key")
);

CREATE INDEX "sign_in_attempts_expires_at_idx" ON "sign_in_attempts"("expires_at");
