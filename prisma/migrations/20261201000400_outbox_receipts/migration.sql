-- CreateTable
CREATE TABLE "outbox_messages" (
    "id" TEXT NOT NULL,
    "topic" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "last_error" TEXT,
    "sent_at" TIMESTAMPTZ(3),

    CONSTRAINT "outbox_messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "receipts" (
    "id" BIGSERIAL NOT NULL,
    "number" TEXT NOT NULL,
    "order_id" UUID NOT NULL,
    "payment_id" UUID NOT NULL,
    "message_id" TEXT NOT NULL,
    "lines" JSONB NOT NULL,
    "total_minor" INTEGER NOT NULL,
    "currency" CHAR(3) NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "processed_messages" (
    "consumer" TEXT NOT NULL,
    "message_id" TEXT NOT NULL,
    "processed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "processed_messages_pkey" PRIMARY KEY ("consumer","message_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "receipts_number_key" ON "receipts"("number");

-- CreateIndex
CREATE UNIQUE INDEX "receipts_order_id_key" ON "receipts"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "receipts_payment_id_key" ON "receipts"("payment_id");

-- AddForeignKey
ALTER TABLE "receipts" ADD CONSTRAINT "receipts_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- The relay's work list: pending rows only, oldest first; it stays small however much is sent.
CREATE INDEX "outbox_messages_pending_idx" ON "outbox_messages"("created_at") WHERE "sent_at" IS NULL;

ALTER TABLE "outbox_messages"
  ADD CONSTRAINT "outbox_messages_attempts_check" CHECK ("attempts" >= 0),
  ADD CONSTRAINT "outbox_messages_id_check" CHECK ("id" LIKE "topic" || ':%');

-- Receipt numbers: unique and readable (R-2026-000123); a rolled-back issue leaves a gap.
CREATE SEQUENCE "receipt_number_seq";

ALTER TABLE "receipts"
  ADD CONSTRAINT "receipts_number_check" CHECK ("number" ~ '^R-[0-9]{4}-[0-9]{6,}$'),
  ADD CONSTRAINT "receipts_total_check" CHECK ("total_minor" > 0),
  ADD CONSTRAINT "receipts_currency_check" CHECK ("currency" ~ '^[A-Z]{3}$'),
  ADD CONSTRAINT "receipts_lines_check" CHECK (jsonb_typeof("lines") = 'array' AND jsonb_array_length("lines") > 0);
