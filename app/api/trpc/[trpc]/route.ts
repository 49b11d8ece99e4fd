import { answerTrpc } from "@/server/http/api-routes";

export const dynamic = "force-dynamic";

export { answerTrpc as GET, answerTrpc as POST };
